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

/* Whether the directory depth levels above fd (depth ".." from it) is the
 * directory root_dev/root_ino, looked up in one fstatat: 1 if so, else 0
 * (a failed look included).  Where it is, the root was an ancestor of fd
 * at that look, so fd was beneath it: ".." is always the directory's
 * parent as it is then (no name, no link is followed: a directory has one
 * parent and no hard links), and no inode but the root's own (held open by
 * its fd, never reused) has its numbers.  A directory moved out of the
 * root has no such ancestor.  A 0 is no proof of anything (moved inside
 * the root to another depth): the caller asks corral_walk_beneath. */
static int corral_above_is_root(int fd, size_t depth, uint64_t root_dev, uint64_t root_ino)
{
    char ups[3 * 128];
    struct stat there;
    size_t i;

    if (depth == 0 || depth > 128)
        return 0;
    for (i = 0; i < depth; i++)
        memcpy(ups + 3 * i, "../", 3);
    ups[3 * depth - 1] = '\0';
    return fstatat(fd, ups, &there, AT_SYMLINK_NOFOLLOW) == 0 &&
           (uint64_t)there.st_dev == root_dev && (uint64_t)there.st_ino == root_ino;
}

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
        /* its depth below the root: one level per '/' in its path, and one */
        size_t depth = 1;
        for (int64_t i = 0; i < left_len; i++)
            depth += left_path[i] == '/';
        shown = corral_above_is_root(left_fd, depth, root_dev, root_ino);
        if (shown != 1)
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

/* corral_above_is_root for a check made on its own (contained/_tree.py's
 * Tree._show on the native fast path): 1 or 0; 0 for a depth outside
 * 1..128. */
static int corral_dir_above_is(int fd, int64_t depth, uint64_t dev, uint64_t ino)
{
    if (depth < 1 || depth > 128)
        return 0;
    return corral_above_is_root(fd, (size_t)depth, dev, ino);
}
