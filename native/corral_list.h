/* corral._native: a directory's listing with kinds and file sizes, behind
 * native/list.cdef (list_directory's one C call per directory).
 *
 * corral_list_sized lists the directory fd from its start: every name (not
 * "." or "..", and every other one kept, UTF-8 or not: Python decodes them
 * as os.fsdecode does) and one code per name, the size of a regular file or
 * a negative kind.  The kind comes from d_type; a regular file (and an
 * entry whose d_type is DT_UNKNOWN) gets one fstatat(AT_SYMLINK_NOFOLLOW)
 * relative to fd, which gives its size (and its kind, should it have been
 * replaced since the entry was read).  An entry gone before its fstatat
 * (ENOENT) is left out.  Linux: getdents64 on fd itself (no dup, no DIR
 * stream); elsewhere readdir on a dup of fd.
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
#define CORRAL_LIST_FILE (-4) /* a regular file whose fstatat failed (not ENOENT) */
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
    if (S_ISREG(st->st_mode))
        return st->st_size < 0 ? 0 : (int64_t)st->st_size;
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

#if defined(__linux__)
struct corral_list_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

static int corral_list_each(int fd, struct corral_list_out *out)
{
    uint64_t store[4096]; /* 32 KiB, aligned for the records */
    char *dents = (char *)store;
    if (lseek(fd, 0, SEEK_SET) < 0)
        return -1;
    for (;;) {
        long got = syscall(SYS_getdents64, fd, dents, sizeof store);
        if (got < 0)
            return -1;
        if (got == 0)
            return 0;
        for (long off = 0; off < got;) {
            struct corral_list_dirent64 *d = (struct corral_list_dirent64 *)(void *)(dents + off);
            off += d->d_reclen;
            if (corral_list_put(out, fd, d->d_name, d->d_type) != 0)
                return -2;
        }
    }
}
#else
static int corral_list_each(int fd, struct corral_list_out *out)
{
    int copy = dup(fd);
    if (copy < 0)
        return -1;
    DIR *dir = fdopendir(copy);
    if (dir == NULL) {
        int saved = errno;
        close(copy);
        errno = saved;
        return -1;
    }
    rewinddir(dir);
    int status = 0;
    for (;;) {
        errno = 0;
        struct dirent *d = readdir(dir);
        if (d == NULL) {
            status = errno != 0 ? -1 : 0;
            break;
        }
        if (corral_list_put(out, fd, d->d_name, d->d_type) != 0) {
            status = -2;
            break;
        }
    }
    int saved = errno;
    closedir(dir);
    errno = saved;
    return status;
}
#endif

static int64_t corral_list_sized(int fd, char *names, int64_t names_size, int64_t *codes,
                                 int64_t codes_size, int64_t *count)
{
    struct corral_list_out out = {names, names_size, 0, codes, codes_size, 0};
    int status = corral_list_each(fd, &out);
    *count = out.count;
    if (status != 0)
        return status;
    return out.used;
}
