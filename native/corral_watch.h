/* corral._native: watching directories (native/watch.cdef).
 *
 * inotify adds a watch by path only; the directory is named by its fd
 * through /proc/self/fd, whose magic link leads to the very object the fd
 * holds, so a directory swapped since it was opened is never the one
 * watched.  The events are read by the caller (read(2) on the watch fd).
 * Writes to a file are not reported (every write in the tree would cost
 * the kernel an event): only entries made, moved and removed. */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#if defined(__linux__)
#include <sys/inotify.h>

static const int CORRAL_HAS_WATCH = 1;

static int corral_watch_open(void)
{
    return inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
}

static int corral_watch_add(int watch_fd, int dir_fd)
{
    char path[64];
    if (watch_fd < 0 || dir_fd < 0) {
        errno = EBADF;
        return -1;
    }
    snprintf(path, sizeof path, "/proc/self/fd/%d", dir_fd);
    return inotify_add_watch(watch_fd, path,
                             IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO |
                             IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK);
}

static int corral_watch_remove(int watch_fd, int watch)
{
    return inotify_rm_watch(watch_fd, watch);
}
#else
static const int CORRAL_HAS_WATCH = 0;

static int corral_watch_open(void)
{
    errno = ENOSYS;
    return -1;
}

static int corral_watch_add(int watch_fd, int dir_fd)
{
    (void)watch_fd;
    (void)dir_fd;
    errno = ENOSYS;
    return -1;
}

static int corral_watch_remove(int watch_fd, int watch)
{
    (void)watch_fd;
    (void)watch;
    errno = ENOSYS;
    return -1;
}
#endif
