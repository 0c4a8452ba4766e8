/* corral._native: read_file's numbered window of a small file
 * (native/read.cdef declares it).
 *
 * read_file holds the whole file in memory; Python would decode it, split
 * it into a list of lines, slice the window, join "N\t" prefixes to it and
 * measure the result against the byte budget.  corral_text_window does the
 * same in one forward pass over the bytes (memchr per line) and one copy of
 * the window, for the common case only: anything it does not render the
 * way Python does (a byte order mark, any '\r', a line that may need
 * cutting) makes it return -1 and the Python path runs.  No allocation:
 * the caller passes the output buffer.  cffi releases the GIL around it.
 */

#include <errno.h>
#include <stdint.h>
#include <string.h>

/* The decimal digits of n (> 0) written at out; their number. */
static int64_t corral_put_decimal(char *out, int64_t n)
{
    char digits[24];
    int64_t count = 0;
    while (n > 0) {
        digits[count++] = (char)('0' + n % 10);
        n /= 10;
    }
    for (int64_t i = 0; i < count; i++)
        out[i] = digits[count - 1 - i];
    return count;
}

/* The number of '\n' in [p, end). */
static int64_t corral_count_lf(const char *p, const char *end)
{
    int64_t count = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL)
            break;
        count++;
        p = nl + 1;
    }
    return count;
}

#define CORRAL_WINDOW_INVALID (-2)

/* The bytes of [p, p+n) that are control characters text does not hold:
 * C0 other than \b \t \n \v \f \r (8 to 13) and ESC, and DEL.  Written
 * as byte compares summed in blocks small enough for 16-bit sums, so the
 * compiler vectorises it. */
static int64_t corral_count_controls(const unsigned char *p, int64_t n)
{
    int64_t count = 0;
    while (n > 0) {
        int64_t block = n < 4096 ? n : 4096;
        uint16_t part = 0;
        for (int64_t i = 0; i < block; i++) {
            unsigned char c = p[i];
            part += (uint16_t)(((c < 32) & ((unsigned char)(c - 8) > 5) & (c != 27)) |
                               (c == 127));
        }
        count += part;
        p += block;
        n -= block;
    }
    return count;
}

int64_t corral_text_window_starts(const char *buf, int64_t len, int64_t offset, int64_t limit,
                                  int64_t cap, int64_t budget, int64_t head, char *out,
                                  int64_t out_size, int64_t *facts, int64_t *starts,
                                  int64_t starts_size)
{
    /* the arguments first, before any arithmetic on them */
    if (len < 0 || offset < 1 || limit < 0 || cap < 0 || budget < 0 || head < 0 ||
        out_size < 0 || facts == NULL || (buf == NULL && len > 0) ||
        (out == NULL && out_size > 0) || starts_size < 0 ||
        (starts == NULL && starts_size > 0)) {
        errno = EINVAL;
        return CORRAL_WINDOW_INVALID;
    }
    const char *p = buf, *end = len > 0 ? buf + len : buf;
    /* the window's end, clamped: a window past every line shows none */
    int64_t line = 1, used = 0, shown = 0;
    int64_t stop = limit > INT64_MAX - offset ? INT64_MAX : offset + limit;
    if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
        return -1;
    if (len > 0 && memchr(buf, '\r', (size_t)len) != NULL)
        return -1;
    facts[2] = len > 0 && memchr(buf, '\n', (size_t)len) != NULL;
    facts[3] = corral_count_controls((const unsigned char *)buf, head < len ? head : len);
    while (p < end && line < stop) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl != NULL ? nl : end;
        if (line >= offset) {
            int64_t text = line_end - p;
            char number[24];
            int64_t digits = corral_put_decimal(number, line);
            int64_t need = used + (shown ? 1 : 0) + digits + 1 + text;
            if (text > cap)
                return -1; /* Python cuts it (or finds it short in characters) */
            if (need > budget && shown > 0) {
                stop = line; /* over the budget: the lines before it are shown */
                break;
            }
            if (need > out_size || (starts != NULL && shown >= starts_size))
                return -1;
            if (starts != NULL)
                starts[shown] = p - buf;
            if (shown)
                out[used++] = '\n';
            memcpy(out + used, number, (size_t)digits);
            used += digits;
            out[used++] = '\t';
            memcpy(out + used, p, (size_t)text);
            used += text;
            shown++;
        }
        line++;
        p = nl != NULL ? nl + 1 : end;
    }
    /* the lines after the window are only counted */
    line += corral_count_lf(p, end);
    if (p < end && end[-1] != '\n')
        line++; /* an unterminated last line */
    facts[0] = line - 1;
    facts[1] = shown;
    return used;
}

int64_t corral_text_window_head(const char *buf, int64_t len, int64_t offset, int64_t limit,
                                int64_t cap, int64_t budget, int64_t head, char *out,
                                int64_t out_size, int64_t *facts)
{
    return corral_text_window_starts(buf, len, offset, limit, cap, budget, head, out, out_size,
                                     facts, NULL, 0);
}

int64_t corral_text_window(const char *buf, int64_t len, int64_t offset, int64_t limit,
                           int64_t cap, int64_t budget, char *out, int64_t out_size,
                           int64_t *facts)
{
    int64_t four[4];
    if (facts == NULL) {
        errno = EINVAL;
        return CORRAL_WINDOW_INVALID;
    }
    int64_t written = corral_text_window_head(buf, len, offset, limit, cap, budget, 0, out,
                                              out_size, four);
    if (written >= 0)
        memcpy(facts, four, 3 * sizeof(int64_t));
    return written;
}
