/* corral._native: a directory's listing with kinds and file sizes, behind
 * native/list.cdef (list_directory's one C call per directory).
 *
 * corral_list_sized lists the directory fd from its start: every name (not
 * "." or "..", and every other one kept, UTF-8 or not: Python decodes them
 * as os.fsdecode does) and one code per name, the size of a regular file or
 * a negative kind.  The kind comes from d_type; a regular file (and an
 * entry whose d_type is DT_UNKNOWN) gets one fstatat(AT_SYMLINK_NOFOLLOW)
 * relative to fd, which gives its size (and its kind, should it have been
 * replaced since the entry was read); a file with more than one name gets
 * no size.  An entry gone before its fstatat
 * (ENOENT) is left out.  The entries come from corral_each_dirent
 * (corral_dirents.h).
 *
 * No allocation: the caller passes the buffers, and calls again with larger
 * ones when told they were too small.  cffi releases the GIL around the call.
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

#define CORRAL_LIST_DIR (-1)
#define CORRAL_LIST_SYMLINK (-2)
#define CORRAL_LIST_OTHER (-3)
#define CORRAL_LIST_FILE (-4) /* a regular file without a size: fstatat failed (not
                                * ENOENT), or it has more than one name */
#define CORRAL_LIST_GONE (-5) /* internal: removed since read, left out */

/* Where corral_list_sized writes, and how much of it is used. */
struct corral_list_out {
    char *names;
    int64_t names_size, used;
    int64_t *codes;
    int64_t codes_size, count;
};

static int64_t corral_list_mode_code(const struct stat *st)
{
    /* a file of several names: its size is its other names' (one may be
     * denied or outside the root), so it is not said */
    if (S_ISREG(st->st_mode))
        return st->st_nlink > 1 ? CORRAL_LIST_FILE
               : st->st_size < 0 ? 0 : (int64_t)st->st_size;
    if (S_ISDIR(st->st_mode))
        return CORRAL_LIST_DIR;
    return S_ISLNK(st->st_mode) ? CORRAL_LIST_SYMLINK : CORRAL_LIST_OTHER;
}

/* The code of the entry name of fd whose d_type is d_type. */
static int64_t corral_list_code(int fd, const char *name, unsigned char d_type)
{
    struct stat st;
    switch (d_type) {
    case DT_DIR:
        return CORRAL_LIST_DIR;
    case DT_LNK:
        return CORRAL_LIST_SYMLINK;
    case DT_REG:
    case DT_UNKNOWN:
        break;
    default:
        return CORRAL_LIST_OTHER;
    }
    if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        return corral_list_mode_code(&st);
    if (errno == ENOENT)
        return CORRAL_LIST_GONE;
    return d_type == DT_REG ? CORRAL_LIST_FILE : CORRAL_LIST_OTHER;
}

/* One entry into out; 0, or -2 when it does not fit. */
static int corral_list_put(struct corral_list_out *out, int fd, const char *name,
                           unsigned char d_type)
{
    size_t n = strlen(name);
    if (name[0] == '.' && (n == 1 || (n == 2 && name[1] == '.')))
        return 0;
    int64_t code = corral_list_code(fd, name, d_type);
    if (code == CORRAL_LIST_GONE)
        return 0;
    if (out->count >= out->codes_size || out->used + (int64_t)n + 1 > out->names_size)
        return -2;
    memcpy(out->names + out->used, name, n + 1);
    out->used += (int64_t)n + 1;
    out->codes[out->count++] = code;
    return 0;
}

static int corral_list_visit(void *state, int fd, const char *name, unsigned char d_type)
{
    return corral_list_put((struct corral_list_out *)state, fd, name, d_type);
}

static int64_t corral_list_sized(int fd, char *names, int64_t names_size, int64_t *codes,
                                 int64_t codes_size, int64_t *count)
{
    if (names_size < 0 || codes_size < 0 || count == NULL || (names == NULL && names_size > 0) ||
        (codes == NULL && codes_size > 0)) {
        errno = EINVAL;
        return -1;
    }
    struct corral_list_out out = {names, names_size, 0, codes, codes_size, 0};
    int status = corral_each_dirent(fd, 1, corral_list_visit, &out);
    *count = out.count;
    if (status != 0)
        return status;
    return out.used;
}

/* corral_names_clear: whether no name of a run may meet a policy's quick
 * name tests (list.cdef).  tests: entries of kind byte ('n' exact name,
 * 's' suffix, 'p' prefix), two bytes of length (big-endian), the bytes. */
static unsigned char corral_names_lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + ('a' - 'A')) : c;
}

/* Two bytes' mark among 1,024. */
static unsigned corral_names_pair(unsigned char a, unsigned char b)
{
    return ((unsigned)a * 131u + (unsigned)b) & 1023u;
}

/* Whether the name (n bytes) meets one of the tests, lower-cased as it is read. */
static int corral_names_hit(const char *tests, int64_t tests_size, const char *name, int64_t n)
{
    int64_t at = 0;
    while (at < tests_size) {
        char kind = tests[at];
        int64_t len = ((int64_t)(unsigned char)tests[at + 1] << 8) |
                      (int64_t)(unsigned char)tests[at + 2];
        const unsigned char *test = (const unsigned char *)tests + at + 3;
        at += 3 + len;
        if (len > n || (kind == 'n' && len != n))
            continue;
        const unsigned char *from = (const unsigned char *)(kind == 's' ? name + (n - len) : name);
        int64_t k = 0;
        while (k < len && corral_names_lower(from[k]) == test[k])
            k++;
        if (k == len)
            return 1;
    }
    return 0;
}

static int corral_names_clear(const char *tests, int64_t tests_size, const char *run,
                              int64_t run_size)
{
    if (tests_size < 0 || run_size < 0 || (tests == NULL && tests_size > 0) ||
        (run == NULL && run_size > 0)) {
        errno = EINVAL;
        return -1;
    }
    /* the entries must fit the buffer exactly (checked before any is
     * read); meanwhile the first bytes of exact names and prefixes and the
     * last bytes of suffixes are marked, so a name meeting none of those
     * marks is passed over without reading the tests */
    /* one byte: the tests of that length; two: a hash of the first two
     * bytes (exact names, prefixes) or the last two (suffixes) of the others */
    uint64_t firsts[4] = {0, 0, 0, 0}, lasts[4] = {0, 0, 0, 0};
    uint64_t heads[16] = {0}, tails[16] = {0};
    int empty_name = 0;
    int64_t at = 0;
    while (at < tests_size) {
        if (tests_size - at < 3) {
            errno = EINVAL;
            return -1;
        }
        char kind = tests[at];
        int64_t len = ((int64_t)(unsigned char)tests[at + 1] << 8) |
                      (int64_t)(unsigned char)tests[at + 2];
        if ((kind != 'n' && kind != 's' && kind != 'p') || len > tests_size - at - 3) {
            errno = EINVAL;
            return -1;
        }
        const unsigned char *test = (const unsigned char *)tests + at + 3;
        if (len == 0) {
            if (kind != 'n')
                return 0; /* an empty suffix or prefix: every name meets it */
            empty_name = 1;
        } else if (len == 1) {
            uint64_t *marks = kind == 's' ? lasts : firsts;
            marks[test[0] >> 6] |= (uint64_t)1 << (test[0] & 63);
        } else {
            unsigned pair = kind == 's' ? corral_names_pair(test[len - 2], test[len - 1])
                                        : corral_names_pair(test[0], test[1]);
            uint64_t *marks = kind == 's' ? tails : heads;
            marks[pair >> 6] |= (uint64_t)1 << (pair & 63);
        }
        at += 3 + len;
    }
    /* "~1" folds to more than its lower case (a name has no NUL, so it is
     * never across two); '~' and each name's end are found by memchr, not a
     * test of every byte: of a name only its first and last two are read here */
    for (const char *tilde = run_size > 0 ? memchr(run, '~', (size_t)run_size) : NULL;
         tilde != NULL && tilde < run + run_size - 1;
         tilde = memchr(tilde + 1, '~', (size_t)(run + run_size - tilde - 1))) {
        if (tilde[1] == '1')
            return 0;
    }
    const unsigned char *bytes = (const unsigned char *)run;
    int64_t start = 0;
    for (;;) {
        const char *nul =
            start < run_size ? memchr(run + start, '\0', (size_t)(run_size - start)) : NULL;
        int64_t i = nul != NULL ? (int64_t)(nul - run) : run_size; /* the name's end */
        int64_t n = i - start;
        if (n == 0) {
            if (empty_name)
                return 0;
        } else {
            unsigned char first = corral_names_lower(bytes[start]);
            unsigned char last = corral_names_lower(bytes[i - 1]);
            if (last == '.' || last == ' ')
                return 0; /* folds to more than its lower case */
            int maybe = ((firsts[first >> 6] >> (first & 63)) & 1) ||
                        ((lasts[last >> 6] >> (last & 63)) & 1);
            if (!maybe && n >= 2) {
                unsigned head = corral_names_pair(first, corral_names_lower(bytes[start + 1]));
                unsigned tail = corral_names_pair(corral_names_lower(bytes[i - 2]), last);
                maybe = ((heads[head >> 6] >> (head & 63)) & 1) ||
                        ((tails[tail >> 6] >> (tail & 63)) & 1);
            }
            if (maybe) {
                if (corral_names_hit(tests, tests_size, run + start, n))
                    return 0;
            }
        }
        if (nul == NULL)
            break;
        start = i + 1;
    }
    return 1;
}
