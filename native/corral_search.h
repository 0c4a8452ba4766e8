/* corral_list_below (search.cdef): the search walk's step into a
 * subdirectory on the openat2 fast path, in one call where it took a
 * Python call and two C calls (contained/_tree.py, Tree._open): the check
 * that the directory the walk just left, in which the search read files
 * by name, is still beneath the root (THREATS row 35c: made before that
 * directory's fd is closed and before anything read there is answered),
 * then one openat2 of the next directory's path from the root (beneath,
 * always: a resolve without RESOLVE_BENEATH is refused; no symlink on the
 * walk's fast path: the kernel shows the result beneath), then its listing as
 * corral_list_dir gives it.  No decision is made here but "shown beneath":
 * a left directory not shown beneath (or with no name to compare) and an
 * openat2 that fails are handed back, and the caller decides as it did
 * before, through its own checks. */

/* corral_walk.h comes after this file: the check it makes (its own
 * declaration, in walk.cdef, says what it answers) */
static int corral_walk_beneath(int proc_fd, int root_fd, int fd, const char *path, size_t len,
                               const char *root_name, uint64_t root_dev, uint64_t root_ino);

static int64_t corral_list_below(int root_fd, const char *path, int64_t len, int flags,
                                 uint64_t resolve, int left_fd, const char *left_path,
                                 int64_t left_len, int proc_fd, const char *root_name,
                                 uint64_t root_dev, uint64_t root_ino, char *buf, int64_t size,
                                 int64_t *counts)
{
    int fd, shown, saved;
    int64_t low;

    if (counts == NULL) {
        errno = EINVAL;
        return -1;
    }
    counts[2] = -1;
    counts[3] = 1;
    if (path == NULL || len <= 0 || (int64_t)strnlen(path, (size_t)len + 1) != len ||
        (flags & ~CORRAL_LIST_AT_FLAGS) != 0 || (resolve & CORRAL_RESOLVE_BENEATH) == 0 ||
        size < 0 || (buf == NULL && size > 0) ||
        (left_fd >= 0 && (left_path == NULL || left_len <= 0 ||
                          (int64_t)strnlen(left_path, (size_t)left_len + 1) != left_len))) {
        errno = EINVAL;
        return -1;
    }
    if (left_fd >= 0) {
        shown = corral_walk_beneath(proc_fd, root_fd, left_fd, left_path, (size_t)left_len,
                                    root_name, root_dev, root_ino);
        counts[3] = shown;
        if (shown != 1)
            return -4; /* nothing opened: the caller checks again, its own way */
    }
    fd = corral_openat2(root_fd, path, (uint64_t)(unsigned int)(flags | CORRAL_LIST_AT_ADDED), 0,
                        resolve);
    if (fd < 0)
        return -3; /* errno is openat2's: the caller opens the name its own way */
    counts[2] = fd;
    low = corral_list_dir_from(fd, 0, buf, size, counts); /* just opened: at its start */
    if (low == -1) {
        saved = errno;
        close(fd);
        counts[2] = -1;
        errno = saved;
    }
    return low;
}
