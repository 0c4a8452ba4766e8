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
static int corral_names_hit(const char *tests, int64_t tests_size, const char *name, int64_t n)
{
    if (n > 0 && (name[n - 1] == '.' || name[n - 1] == ' '))
        return 1; /* folds to more than its lower case */
    for (int64_t i = 0; i + 1 < n; i++)
        if (name[i] == '~' && name[i + 1] == '1')
            return 1;
    int64_t at = 0;
    while (at < tests_size) {
        char kind = tests[at];
        int64_t len = ((int64_t)(unsigned char)tests[at + 1] << 8) |
                      (int64_t)(unsigned char)tests[at + 2];
        const char *test = tests + at + 3;
        at += 3 + len;
        if (len > n || (kind == 'n' && len != n))
            continue;
        const char *from = kind == 's' ? name + (n - len) : name;
        int64_t k = 0;
        while (k < len) {
            char c = from[k];
            if (c >= 'A' && c <= 'Z')
                c = (char)(c + ('a' - 'A'));
            if (c != test[k])
                break;
            k++;
        }
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
    /* the entries must fit the buffer exactly: checked before any is read */
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
        at += 3 + len;
    }
    int64_t start = 0;
    for (int64_t i = 0; i <= run_size; i++) {
        if (i < run_size && run[i] != '\0')
            continue;
        if (corral_names_hit(tests, tests_size, run + start, i - start))
            return 0;
        start = i + 1;
    }
    return 1;
}
