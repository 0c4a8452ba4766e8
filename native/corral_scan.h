/* corral._native: the search scanner behind native/scan.cdef.
 *
 * Three parts, each a loop the Python side would otherwise run per entry,
 * per file or per line:
 *
 * - corral_scan_lines / corral_count_newlines: memchr/memmem over a buffer
 *   grep has read: the lines holding a literal, their bounds and numbers,
 *   in one forward pass (every byte is looked at a bounded number of
 *   times, so a search is linear in the buffer).
 * - corral_list_dir: one directory's entries, listed through its fd, sorted
 *   into regular files and the rest by d_type (lstat only where the file
 *   system gives no type), names that are not UTF-8 left out and counted.
 * - corral_scan_files: grep's per-file work for a directory's worth of
 *   files named by the walk: openat(dir_fd, name, O_NOFOLLOW|O_NONBLOCK|
 *   O_NOCTTY|O_CLOEXEC), fstat, and for a small regular file a read and a
 *   memmem of the needle; what to do with each file is left to the caller
 *   (which files to name, what a special file or a hard link means), which
 *   gets a status per file and the fd of each file it must search itself.
 *
 * No allocation (the caller passes every buffer) and no decision on paths:
 * names are single components the walk listed, opened relative to a
 * directory fd the walk holds (a name that is not one is refused, EINVAL).
 * Every function checks its lengths, positions and budgets before any
 * arithmetic on them: -1 and EINVAL for what is out of its contract.
 * memmem is declared because _GNU_SOURCE is defined before any header
 * (corral_native.h, and the build's -D_GNU_SOURCE).
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/syscall.h>
#endif

static const char *corral_find(const char *hay, int64_t size, const char *needle, int64_t nlen)
{
    if (nlen <= 0 || size < nlen)
        return NULL;
    if (nlen == 1)
        return memchr(hay, (unsigned char)needle[0], (size_t)size);
    return memmem(hay, (size_t)size, needle, (size_t)nlen);
}

/* The number of '\n' in [p, end): eight bytes at a time (a '\n' byte
 * becomes a zero byte under XOR, and the high bit of each zero byte is
 * set exactly, with no borrow between bytes), so a buffer of short lines
 * is counted at memory speed, not one memchr call per line. */
static int64_t corral_newlines_in(const char *start, const char *end)
{
    const unsigned char *p = (const unsigned char *)start, *e = (const unsigned char *)end;
    const uint64_t low7 = 0x7F7F7F7F7F7F7F7FULL, nl = 0x0A0A0A0A0A0A0A0AULL;
    int64_t count = 0;
    while (p < e && ((uintptr_t)p & 7) != 0)
        count += *p++ == '\n';
    while (e - p >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        uint64_t x = word ^ nl;
        uint64_t zero = ~(((x & low7) + low7) | x | low7);
        count += __builtin_popcountll(zero);
        p += 8;
    }
    while (p < e)
        count += *p++ == '\n';
    return count;
}

/* The start of the line holding at: just past the last '\n' in [low, at),
 * or low. */
static const char *corral_line_start(const char *low, const char *at)
{
    while (at > low && at[-1] != '\n')
        at--;
    return at;
}

static int64_t corral_scan_lines(const char *buf, int64_t len, int64_t pos, int64_t line,
                                 const char *needle, int64_t nlen, int64_t *out,
                                 int64_t max_hits, int64_t *state)
{
    int64_t hits = 0;
    /* line grows by at most one per byte and one more: it must not overflow */
    if (len < 0 || pos < 0 || pos > len || nlen < 0 || max_hits < 0 ||
        max_hits > INT64_MAX / 4 || line < 0 || line > INT64_MAX - len - 1 || state == NULL ||
        (buf == NULL && len > 0) || (needle == NULL && nlen > 0) ||
        (out == NULL && max_hits > 0)) {
        errno = EINVAL;
        return -1;
    }
    while (pos < len && hits < max_hits) {
        const char *at = corral_find(buf + pos, len - pos, needle, nlen);
        if (at == NULL)
            break;
        line += corral_newlines_in(buf + pos, at);
        int64_t start = (int64_t)(corral_line_start(buf + pos, at) - buf);
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

static int64_t corral_count_newlines(const char *buf, int64_t len, int64_t start, int64_t end)
{
    if (len < 0 || start < 0 || end < 0 || start > len || end > len ||
        (buf == NULL && len > 0)) {
        errno = EINVAL;
        return -1;
    }
    if (start >= end)
        return 0;
    return corral_newlines_in(buf + start, buf + end);
}

/* -- listing a directory ------------------------------------------------------ */

/* Whether s[0:n] is UTF-8 as Python's strict decoder reads it (no
 * surrogates, no overlong forms, nothing past U+10FFFF). */
static int corral_utf8_valid(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        size_t more;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            more = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            more = 2;
            if (c == 0xE0)
                lo = 0xA0;
            else if (c == 0xED)
                hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            more = 3;
            if (c == 0xF0)
                lo = 0x90;
            else if (c == 0xF4)
                hi = 0x8F;
        } else {
            return 0;
        }
        if (n - i <= more)
            return 0;
        if (s[i + 1] < lo || s[i + 1] > hi)
            return 0;
        for (size_t k = 2; k <= more; k++)
            if (s[i + k] < 0x80 || s[i + k] > 0xBF)
                return 0;
        i += more + 1;
    }
    return 1;
}

/* 'f' regular file, 'd' directory, 'l' symlink, 'o' anything else (also an
 * entry gone before its lstat). */
static char corral_kind(int dir_fd, const char *name, unsigned char d_type)
{
    struct stat st;
    switch (d_type) {
    case DT_REG:
        return 'f';
    case DT_DIR:
        return 'd';
    case DT_LNK:
        return 'l';
    case DT_UNKNOWN:
        break;
    default:
        return 'o';
    }
    if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return 'o';
    if (S_ISREG(st.st_mode))
        return 'f';
    if (S_ISDIR(st.st_mode))
        return 'd';
    return S_ISLNK(st.st_mode) ? 'l' : 'o';
}

/* One entry into buf: a regular file's name (NUL-terminated) at *low,
 * upwards; anything else as its kind byte, name and NUL below *high,
 * downwards.  0, or -1 when it does not fit. */
static int corral_put_entry(char *buf, int64_t *low, int64_t *high, const char *name,
                            char kind, int64_t *counts)
{
    size_t n = strlen(name);
    if (name[0] == '.' && (n == 1 || (n == 2 && name[1] == '.')))
        return 0;
    if (!corral_utf8_valid((const unsigned char *)name, n)) {
        counts[0]++;
        return 0;
    }
    if (kind == 'f') {
        if (*low + (int64_t)n + 1 > *high)
            return -1;
        memcpy(buf + *low, name, n + 1);
        *low += (int64_t)n + 1;
        return 0;
    }
    if (*high - (int64_t)n - 2 < *low)
        return -1;
    *high -= (int64_t)n + 2;
    buf[*high] = kind;
    memcpy(buf + *high + 1, name, n + 1);
    return 0;
}

/* Where corral_list_dir puts entries (see corral_put_entry). */
struct corral_scan_out {
    char *buf;
    int64_t *low, *high, *counts;
};

static int corral_scan_visit(void *state, int fd, const char *name, unsigned char d_type)
{
    struct corral_scan_out *out = (struct corral_scan_out *)state;
    char kind = corral_kind(fd, name, d_type);
    return corral_put_entry(out->buf, out->low, out->high, name, kind, out->counts) != 0 ? -2 : 0;
}

/* corral_list_dir, from the start when rewind is set, else from the fd's
 * offset (a directory just opened: no lseek). */
static int64_t corral_list_dir_from(int fd, int rewind, char *buf, int64_t size,
                                    int64_t *counts)
{
    int64_t low = 0, high = size;
    if (size < 0 || counts == NULL || (buf == NULL && size > 0)) {
        errno = EINVAL;
        return -1;
    }
    counts[0] = 0;
    struct corral_scan_out out = {buf, &low, &high, counts};
    int status = corral_each_dirent(fd, rewind, corral_scan_visit, &out);
    if (status != 0)
        return status;
    counts[1] = high;
    return low;
}

static int64_t corral_list_dir(int fd, char *buf, int64_t size, int64_t *counts)
{
    return corral_list_dir_from(fd, 1, buf, size, counts);
}

/* The open flags corral_list_at takes: a directory opened to be read,
 * never through a symlink (O_DIRECTORY, O_NOFOLLOW and O_CLOEXEC are
 * always added). */
#define CORRAL_LIST_AT_FLAGS (O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | \
                              CORRAL_O_NOATIME | CORRAL_O_LARGEFILE)
#define CORRAL_LIST_AT_ADDED (O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

static int64_t corral_list_at(int dir_fd, const char *name, int flags, char *buf, int64_t size,
                              int64_t *counts)
{
    if (counts == NULL) {
        errno = EINVAL;
        return -1;
    }
    counts[2] = -1;
    if (!corral_is_name(name) || (flags & ~CORRAL_LIST_AT_FLAGS) != 0 || size < 0 ||
        (buf == NULL && size > 0)) {
        errno = EINVAL;
        return -1;
    }
    int fd = openat(dir_fd, name, flags | CORRAL_LIST_AT_ADDED);
    counts[2] = fd;
    if (fd < 0)
        return -1;
    int64_t low = corral_list_dir_from(fd, 0, buf, size, counts); /* just opened: at its start */
    if (low == -1) {
        int saved = errno;
        close(fd);
        counts[2] = -1;
        errno = saved;
    }
    return low;
}

/* -- grep's files ------------------------------------------------------------------ */

#define CORRAL_SCAN_ABSENT 0
#define CORRAL_SCAN_OPEN 1
#define CORRAL_SCAN_BINARY 2
#define CORRAL_SCAN_SPECIAL 3
#define CORRAL_SCAN_HARDLINK 4
#define CORRAL_SCAN_OPEN_ERROR 5
#define CORRAL_SCAN_READ_ERROR 6

#define CORRAL_SCAN_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

/* Read fd from offset into buf until want bytes or the end; the count or
 * -1.  A short read that ends where the file ended when it was fstat-ed
 * (size > 0) is its end: no second read is made only to be told so.  A
 * file grown since reads on to its new end; a short read before size (a
 * FUSE file) reads on; size 0 (a /proc file) reads to the read of 0. */
static int64_t corral_read_sized(int fd, char *buf, int64_t want, int64_t offset, int64_t size)
{
    int64_t got = 0;
    while (got < want) {
        ssize_t n = pread(fd, buf + got, (size_t)(want - got), (off_t)(offset + got));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0)
            break;
        got += n;
        if (size > 0 && offset + got == size)
            break;
    }
    return got;
}

/* Read a regular file through buf, a chunk at a time (the last nlen - 1
 * bytes of one kept before the next, so a needle across two is found),
 * until the needle is found (CORRAL_SCAN_OPEN), the end (ABSENT), a NUL in
 * the first sniff bytes (BINARY) or more than limit bytes read (OPEN: the
 * caller reads the rest, between its checkpoints). */
static int64_t corral_stream_file(int fd, const char *needle, int64_t nlen, int64_t sniff,
                                  char *buf, int64_t bufsize, int64_t limit, int64_t size,
                                  int64_t *read_bytes)
{
    int64_t keep = 0, offset = 0;
    for (;;) {
        int64_t want = bufsize - keep;
        int64_t got = corral_read_sized(fd, buf + keep, want, offset, size);
        if (got < 0)
            return -1;
        *read_bytes += got;
        if (offset < sniff) { /* the file's first sniff bytes, in however many chunks */
            int64_t look = sniff - offset < got ? sniff - offset : got;
            if (memchr(buf + keep, 0, (size_t)look) != NULL)
                return CORRAL_SCAN_BINARY;
        }
        int64_t total = keep + got;
        if (nlen == 0 || corral_find(buf, total, needle, nlen) != NULL)
            return CORRAL_SCAN_OPEN; /* no needle to test, or a hit */
        if (got < want)
            return CORRAL_SCAN_ABSENT;
        offset += got;
        if (offset >= limit)
            return CORRAL_SCAN_OPEN;
        keep = nlen - 1 < total ? nlen - 1 : total;
        memmove(buf, buf + total - keep, (size_t)keep);
    }
}

/* One file: its status, and out[1] the fd (OPEN), errno (errors) or -1. */
static int64_t corral_scan_file(int dir_fd, const char *name, const char *needle, int64_t nlen,
                                int64_t sniff, int64_t keep_links, char *buf, int64_t bufsize,
                                int64_t limit, int64_t *out, int64_t *read_bytes)
{
    struct stat st;
    out[1] = -1;
    out[2] = 0;
    out[3] = 0;
    if (!corral_is_name(name)) { /* a path: never walked here */
        out[1] = EINVAL;
        return CORRAL_SCAN_OPEN_ERROR;
    }
    int fd = openat(dir_fd, name, CORRAL_SCAN_FLAGS);
    if (fd < 0) {
        out[1] = errno;
        return CORRAL_SCAN_OPEN_ERROR;
    }
    if (fstat(fd, &st) != 0) {
        out[1] = errno;
        close(fd);
        return CORRAL_SCAN_READ_ERROR;
    }
    out[2] = (int64_t)st.st_size;
    out[3] = (int64_t)st.st_nlink;
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return CORRAL_SCAN_SPECIAL;
    }
    if (st.st_nlink > 1 && !keep_links) {
        close(fd);
        return CORRAL_SCAN_HARDLINK;
    }
    if ((int64_t)st.st_size >= limit) {
        out[1] = fd; /* too large for one call: the caller streams it */
        return CORRAL_SCAN_OPEN;
    }
    int64_t status = corral_stream_file(fd, needle, nlen, sniff, buf, bufsize, limit,
                                        (int64_t)st.st_size, read_bytes);
    if (status < 0) {
        out[1] = errno;
        close(fd);
        return CORRAL_SCAN_READ_ERROR;
    }
    if (status == CORRAL_SCAN_OPEN)
        out[1] = fd;
    else
        close(fd);
    return status;
}

static int64_t corral_scan_files(int dir_fd, const char *names, int64_t names_size,
                                 int64_t count, const char *needle, int64_t nlen, int64_t sniff,
                                 int64_t keep_links, char *buf, int64_t bufsize, int64_t budget,
                                 int64_t *out, int64_t *consumed)
{
    int64_t done = 0, read_bytes = 0, used = 0;
    if (names == NULL || names_size < 0 || count < 0 || count > INT64_MAX / 4 || nlen < 0 ||
        sniff < 0 || bufsize < 1 || budget < 0 || buf == NULL || consumed == NULL ||
        (needle == NULL && nlen > 0) || (out == NULL && count > 0)) {
        errno = EINVAL;
        return -1;
    }
    if (nlen > bufsize / 2)
        nlen = 0; /* never (the buffer is far larger): every file is the caller's then */
    while (done < count && (done == 0 || read_bytes < budget)) {
        const char *name = names + used;
        const char *nul = memchr(name, '\0', (size_t)(names_size - used));
        if (nul == NULL)
            break; /* no whole name left in names[0:names_size] */
        int64_t *row = out + 4 * done;
        row[0] = corral_scan_file(dir_fd, name, needle, nlen, sniff, keep_links, buf, bufsize,
                                  budget, row, &read_bytes);
        used += (int64_t)(nul - name) + 1;
        done++;
    }
    if (done == 0 && count > 0) {
        errno = EINVAL; /* names held no NUL-terminated name */
        return -1;
    }
    *consumed = used;
    return done;
}
