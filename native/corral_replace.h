/* corral_replace_file (replace.cdef): a file's whole atomic replace in one
 * call.  No decision is made here: contained/_replace.py decides what is
 * carried over and whether this call may make the replace; this only makes
 * the system calls and reports what it found. */

#if defined(CORRAL_TEST_HOOKS)
/* Test builds only: called after the temporary file is closed and before
 * the replaced name is looked at, so a test can swap that file in the
 * window deterministically.  The installed module has no hook. */
static void (*corral_replace_hook)(int, const char *) = NULL;

static void corral_set_replace_hook(void (*hook)(int, const char *))
{
    corral_replace_hook = hook;
}
#endif

static int corral_replace_file(int dirfd, const char *tmp, const char *name, const char *data,
                               size_t size, int flags, int mode, uint64_t uid, uint64_t gid,
                               uint64_t dev, uint64_t ino)
{
    struct stat info;
    size_t done = 0;
    int fd, saved, answer = -1;

    if (!corral_is_name(tmp) || !corral_is_name(name) || (data == NULL && size > 0) ||
        (flags & (O_ACCMODE | O_CREAT | O_EXCL)) != (O_WRONLY | O_CREAT | O_EXCL) ||
        !corral_open_args_ok(flags, mode)) {
        errno = EINVAL;
        return -1;
    }
    fd = openat(dirfd, tmp, flags, (mode_t)mode);
    if (fd < 0)
        return -1;
    while (done < size) {
        ssize_t wrote = write(fd, data + done, size - done);
        if (wrote < 0) {
            if (errno == EINTR)
                continue;
            goto failed;
        }
        done += (size_t)wrote;
    }
    if (fstat(fd, &info) != 0)
        goto failed;
    if ((uint64_t)info.st_uid != uid || (uint64_t)info.st_gid != gid ||
        (info.st_mode & 07777) != (mode_t)mode) {
        answer = 1;  /* its owner or bits to be carried over: by the caller */
        goto failed;
    }
    if (fsync(fd) != 0)
        goto failed;
    saved = close(fd);
    fd = -1;
    if (saved != 0)
        goto failed;
#if defined(CORRAL_TEST_HOOKS)
    if (corral_replace_hook != NULL)
        corral_replace_hook(dirfd, name);
#endif
    if (fstatat(dirfd, name, &info, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno != ENOENT)
            goto failed;
        answer = 2;
        goto failed;
    }
    if ((uint64_t)info.st_dev != dev || (uint64_t)info.st_ino != ino) {
        answer = 2;
        goto failed;
    }
    if (renameat(dirfd, tmp, dirfd, name) != 0)
        goto failed;
    return 0;

failed:
    saved = errno;
    if (fd >= 0)
        close(fd);
    unlinkat(dirfd, tmp, 0);
    errno = saved;
    return answer;
}
