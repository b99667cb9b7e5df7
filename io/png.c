/* png.c: png_write_gray through libpng's simplified API (png_image_write_to_stdio), which runs
 * libpng's setjmp/longjmp error handling itself, so no longjmp crosses this code; its errors come
 * back as one line in image.message. The file is ours to open and close: png_image_write_to_file
 * would remove the path on a failed write, even /dev/stdout. */
#include "png.h"

#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <string.h>

#include "../core/error.h"

int png_write_gray(const char *path, const unsigned char *pixels, int width, int height) {
    if (width < 1 || height < 1) return pelab_fail("%s: empty image", path);
    FILE *f = fopen(path, "wb");
    if (!f) return pelab_fail("%s: cannot open for writing: %s", path, strerror(errno));
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    image.width = (png_uint_32)width;
    image.height = (png_uint_32)height;
    image.format = PNG_FORMAT_GRAY;
    if (!png_image_write_to_stdio(&image, f, 0, pixels, width, NULL)) {
        fclose(f);
        return pelab_fail("%s: cannot write the PNG: %s", path, image.message);
    }
    if (fflush(f) != 0 || ferror(f)) {
        int err = errno;
        fclose(f);
        return pelab_fail("%s: write failed: %s", path, strerror(err));
    }
    if (fclose(f) != 0) return pelab_fail("%s: write failed: %s", path, strerror(errno));
    return 0;
}
