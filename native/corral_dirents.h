/* corral._native: one loop over a directory fd's entries, shared by the
 * listings (corral_list.h: list_directory's names and sizes; corral_scan.h:
 * the search walk's names by kind).  No declarations in a .cdef: only the
 * other C files call it.
 *
 * corral_each_dirent gives every entry of the directory fd ("." and ".."
 * included: the callers skip them) to visit(state, fd, name, d_type), in
 * the directory's order; from the start when rewind is set, else from the
 * fd's offset (a directory just opened).  Linux: getdents64 on fd itself
 * (no dup, no DIR stream); elsewhere readdir on a dup of fd.  Returns 0 at
 * the end, -1 with errno when the listing fails, or the first nonzero
 * status visit returned (it stops there).  A record the kernel gave that
 * does not fit what it says of itself (a length of zero, past the bytes
 * read, misaligned, or a name without its NUL) is EIO, never followed.
 */

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/syscall.h>
#endif

typedef int (*corral_visit)(void *state, int fd, const char *name, unsigned char d_type);

#if defined(__linux__)
struct corral_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

static int corral_each_dirent(int fd, int rewind, corral_visit visit, void *state)
{
    uint64_t store[4096]; /* 32 KiB, aligned for the records */
    char *dents = (char *)store;
    if (rewind && lseek(fd, 0, SEEK_SET) < 0)
        return -1;
    for (;;) {
        long got = syscall(SYS_getdents64, fd, dents, sizeof store);
        if (got < 0)
            return -1;
        if (got == 0)
            return 0;
        if ((size_t)got > sizeof store) {
            errno = EIO;
            return -1;
        }
        for (long off = 0; off < got;) {
            const size_t head = offsetof(struct corral_dirent64, d_name);
            size_t room = (size_t)(got - off);
            if (room < head + 1) {
                errno = EIO;
                return -1;
            }
            struct corral_dirent64 *d = (struct corral_dirent64 *)(void *)(dents + off);
            size_t reclen = d->d_reclen;
            if (reclen < head + 1 || reclen > room || reclen % sizeof(uint64_t) != 0 ||
                memchr(d->d_name, '\0', reclen - head) == NULL) {
                errno = EIO;
                return -1;
            }
            off += (long)reclen;
            int status = visit(state, fd, d->d_name, d->d_type);
            if (status != 0)
                return status;
        }
    }
}
#else
static int corral_each_dirent(int fd, int rewind, corral_visit visit, void *state)
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
    if (rewind)
        rewinddir(dir);
    int status = 0;
    for (;;) {
        errno = 0;
        struct dirent *d = readdir(dir);
        if (d == NULL) {
            status = errno != 0 ? -1 : 0;
            break;
        }
        status = visit(state, fd, d->d_name, d->d_type);
        if (status != 0)
            break;
    }
    int saved = errno;
    closedir(dir);
    errno = saved;
    return status;
}
#endif
