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
#include "../core/files.h"

int png_write_gray(const char *path, const unsigned char *pixels, int width, int height) {
    if (width < 1 || height < 1) return pelab_fail("%s: empty image", path);
    AtomicFile file; /* a kill or a full disk leaves the old image or the new one, never half of one */
    FILE *f = atomic_open(&file, path);
    if (!f) return -1;
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    image.width = (png_uint_32)width;
    image.height = (png_uint_32)height;
    image.format = PNG_FORMAT_GRAY;
    if (!png_image_write_to_stdio(&image, f, 0, pixels, width, NULL)) {
        atomic_discard(&file);
        return pelab_fail("%s: cannot write the PNG: %s", path, image.message);
    }
    if (atomic_commit(&file) != 0) return -1;
    return 0;
}
