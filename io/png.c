#include "png.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"

static unsigned long crc_table[256];

static void crc_init(void) {
    for (unsigned n = 0; n < 256; n++) {
        unsigned long c = n;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320UL ^ (c >> 1) : c >> 1;
        crc_table[n] = c;
    }
}

static unsigned long crc_update(unsigned long crc, const unsigned char *buf, size_t n) {
    for (size_t i = 0; i < n; i++) crc = crc_table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
    return crc;
}

static void put32(unsigned char *p, unsigned long v) {
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16), p[2] = (unsigned char)(v >> 8),
    p[3] = (unsigned char)v;
}

/* one chunk: length, type, data, CRC over type + data */
static int write_chunk(FILE *f, const char *type, const unsigned char *data, size_t n) {
    unsigned char head[8], tail[4];
    put32(head, (unsigned long)n);
    memcpy(head + 4, type, 4);
    unsigned long crc = crc_update(0xffffffffUL, head + 4, 4);
    crc = crc_update(crc, data, n) ^ 0xffffffffUL;
    put32(tail, crc);
    return fwrite(head, 1, 8, f) == 8 && (n == 0 || fwrite(data, 1, n, f) == n) && fwrite(tail, 1, 4, f) == 4 ? 0 : -1;
}

int png_write_gray(const char *path, const unsigned char *pixels, int width, int height) {
    if (width < 1 || height < 1) return pelab_fail("%s: empty image", path);
    if (!crc_table[1]) crc_init();
    /* raw scanlines: a filter byte (0 = none) before each row */
    size_t row = (size_t)width + 1, raw_len = row * height;
    unsigned char *raw = xmalloc(raw_len);
    for (int y = 0; y < height; y++) {
        raw[y * row] = 0;
        memcpy(raw + y * row + 1, pixels + (size_t)y * width, width);
    }
    /* zlib stream: header, stored blocks of at most 65535 bytes, Adler-32 */
    size_t n_blocks = raw_len / 65535 + 1, z_len = 2 + raw_len + 5 * n_blocks + 4;
    unsigned char *z = xmalloc(z_len), *p = z;
    *p++ = 0x78, *p++ = 0x01;
    size_t done = 0;
    unsigned long a = 1, b = 0;
    for (size_t i = 0; i < raw_len; i++) a = (a + raw[i]) % 65521, b = (b + a) % 65521;
    do {
        size_t n = raw_len - done > 65535 ? 65535 : raw_len - done;
        *p++ = done + n == raw_len; /* BFINAL on the last block, BTYPE 00 = stored */
        *p++ = (unsigned char)n, *p++ = (unsigned char)(n >> 8);
        *p++ = (unsigned char)~n, *p++ = (unsigned char)(~n >> 8);
        memcpy(p, raw + done, n);
        p += n, done += n;
    } while (done < raw_len);
    put32(p, (b << 16) | a);
    p += 4;

    unsigned char ihdr[13];
    put32(ihdr, (unsigned long)width);
    put32(ihdr + 4, (unsigned long)height);
    ihdr[8] = 8, ihdr[9] = 0, ihdr[10] = 0, ihdr[11] = 0, ihdr[12] = 0; /* 8-bit gray, no interlace */
    static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    FILE *f = fopen(path, "wb");
    int rc = -1;
    if (!f) pelab_fail("%s: cannot open for writing: %s", path, strerror(errno));
    else {
        if (fwrite(signature, 1, 8, f) == 8 && write_chunk(f, "IHDR", ihdr, 13) == 0 &&
            write_chunk(f, "IDAT", z, (size_t)(p - z)) == 0 && write_chunk(f, "IEND", NULL, 0) == 0)
            rc = 0;
        if (fclose(f) != 0) rc = -1;
        if (rc != 0) pelab_fail("%s: write failed: %s", path, strerror(errno));
    }
    free(raw);
    free(z);
    return rc;
}
