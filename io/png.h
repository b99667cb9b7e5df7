/* png.h: write an 8-bit grayscale PNG (attention maps of pelab probe) with libpng (libpng-dev). */
#ifndef PELAB_PNG_H
#define PELAB_PNG_H

/* pixels: [height, width], row-major; -1 with one line in pelab_errmsg naming the path on failure */
int png_write_gray(const char *path, const unsigned char *pixels, int width, int height);

#endif
