/* corral._native: the search scanner behind native/scan.cdef.
 *
 * memchr/memmem over a buffer grep has read: the lines holding a literal,
 * their bounds and numbers, in one forward pass (every byte is looked at a
 * bounded number of times, so a search is linear in the buffer).  No
 * allocation, no system call; cffi releases the GIL around each call.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <stdint.h>
#include <string.h>

static const char *corral_find(const char *hay, int64_t size, const char *needle, int64_t nlen)
{
    if (nlen <= 0 || size < nlen)
        return NULL;
    if (nlen == 1)
        return memchr(hay, (unsigned char)needle[0], (size_t)size);
    return memmem(hay, (size_t)size, needle, (size_t)nlen);
}

/* Count the '\n' in [p, end) and remember where the last one was. */
static int64_t corral_newlines_upto(const char *p, const char *end, const char **last)
{
    int64_t count = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL)
            break;
        count++;
        *last = nl;
        p = nl + 1;
    }
    return count;
}

static int64_t corral_scan_lines(const char *buf, int64_t len, int64_t pos, int64_t line,
                                 const char *needle, int64_t nlen, int64_t *out,
                                 int64_t max_hits, int64_t *state)
{
    int64_t hits = 0;
    while (pos < len && hits < max_hits) {
        const char *at = corral_find(buf + pos, len - pos, needle, nlen);
        if (at == NULL)
            break;
        const char *last = NULL;
        line += corral_newlines_upto(buf + pos, at, &last);
        int64_t start = last == NULL ? pos : (int64_t)(last - buf) + 1;
        const char *nl = memchr(at, '\n', (size_t)(buf + len - at));
        int64_t end = nl == NULL ? len : (int64_t)(nl - buf);
        out[4 * hits] = start;
        out[4 * hits + 1] = end;
        out[4 * hits + 2] = (int64_t)(at - buf);
        out[4 * hits + 3] = line;
        hits++;
        pos = end + 1;
        line++;
    }
    if (pos > len)
        pos = len;
    state[0] = hits < max_hits ? len : pos;
    state[1] = line;
    return hits;
}

static int64_t corral_count_newlines(const char *buf, int64_t start, int64_t end)
{
    const char *last = NULL;
    if (start >= end)
        return 0;
    return corral_newlines_upto(buf + start, buf + end, &last);
}
