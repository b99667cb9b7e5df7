/* png.h: write an 8-bit grayscale PNG with no dependencies (deflate "stored" blocks, no
 * compression): enough for attention maps of a few thousand pixels a side. */
#ifndef PELAB_PNG_H
#define PELAB_PNG_H

/* pixels: [height, width], row-major; -1 with pelab_errmsg naming the path on failure */
int png_write_gray(const char *path, const unsigned char *pixels, int width, int height);

#endif
