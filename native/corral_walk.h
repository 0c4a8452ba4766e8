/* corral_walk_open (walk.cdef): the userspace walk of Root.open when the
 * openat2 fast path is off, for the common path only (plain names, a read
 * or write open that creates and truncates nothing), in one call, so the
 * Python per name goes.  It makes the calls contained/_resolve.py's Walk
 * makes, in the same order: each directory opened O_PATH|O_DIRECTORY|
 * O_NOFOLLOW in the one before (a symlink fails: ENOTDIR or ELOOP), the
 * final name opened O_NOFOLLOW|O_NONBLOCK|O_NOCTTY, fstat, then the
 * containment check of the result (corral_fd_beneath, corral_native.h:
 * a directory on the way may have been moved out of the root meanwhile;
 * a single name, looked up in the root's own fd, needs none, as in Walk).
 * Each directory is closed once the next is open: with no ".." nothing
 * climbs back through the stack, and the check of the result covers every
 * directory on the way.
 *
 * No decision is made here but "not this way": anything unusual (a link,
 * a missing name, a special file, a result not shown beneath, a look
 * refused) closes what it opened and answers -1; the caller's walk then
 * runs from the root and decides, naming the component. */

#if defined(CORRAL_TEST_HOOKS)
/* Test builds only: called after each directory of the walk is opened
 * (its fd and name), so a test can move directories in that window
 * deterministically.  The installed module has no hook. */
static void (*corral_walk_hook)(int, const char *) = NULL;

static void corral_set_walk_hook(void (*hook)(int, const char *))
{
    corral_walk_hook = hook;
}
#endif

#if defined(__linux__) && defined(O_PATH)
#define CORRAL_WALK_FLAGS (O_ACCMODE | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | \
                           O_DIRECTORY | O_NOATIME | O_LARGEFILE)

/* Whether fd, opened at the canonical root-relative path (len bytes), is
 * beneath the root now: 1 or 0 as corral_fd_beneath.  Its kernel name is
 * read first; where it is exactly root_name (the root's kernel name, read
 * once by the caller) followed by "/" and path, and root_name (looked up
 * without following a final link) is the root's directory itself
 * (root_dev, root_ino: its fd's, which never change), that is one name and
 * one stat where corral_fd_beneath reads two names, and as sound: at the
 * stat the root is at root_name, and at the read fd was at
 * root_name/path, so only the root itself (or a directory above it)
 * renamed away and back between the two looks could pass, the window
 * corral_fd_beneath has between its two reads.  The directory before path
 * must be named root_name, not merely stat as the root: a name read from
 * fd is the attacker's when fd is outside, and the stat follows links on
 * the way (an outside directory swapped for a link to the root's parent
 * after the read would pass).  Any other answer (a rename inside the root
 * or of the root, " (deleted)", the root at "/", a failed look) asks
 * corral_fd_beneath, which alone may say 0.  Every other check of the walk
 * (contained/_resolve.py's still_beneath, walk.cdef) knows its canonical
 * path too and calls this. */
static int corral_walk_beneath(int proc_fd, int root_fd, int fd, const char *path, size_t len,
                               const char *root_name, uint64_t root_dev, uint64_t root_ino)
{
    char number[24], mine[4096];
    struct stat there;
    ssize_t got;
    size_t cut;

    if (path == NULL || root_name == NULL)
        return corral_fd_beneath(proc_fd, root_fd, fd);
    snprintf(number, sizeof number, "%d", fd);
    got = readlinkat(proc_fd, number, mine, sizeof mine);
#if defined(CORRAL_TEST_HOOKS)
    if (corral_walk_hook != NULL && got > 0 && (size_t)got < sizeof mine) {
        mine[got] = '\0';
        corral_walk_hook(fd, mine); /* the window between the name read and the stat */
    }
#endif
    if (got > 0 && (size_t)got < sizeof mine && (size_t)got > len + 1 && mine[0] == '/') {
        cut = (size_t)got - len - 1;
        if (mine[cut] == '/' && memcmp(mine + cut + 1, path, len) == 0 &&
            strlen(root_name) == cut && memcmp(mine, root_name, cut) == 0) {
            mine[cut] = '\0';
            if (fstatat(AT_FDCWD, mine, &there, AT_SYMLINK_NOFOLLOW) == 0 &&
                (uint64_t)there.st_dev == root_dev && (uint64_t)there.st_ino == root_ino)
                return 1;
        }
    }
    return corral_fd_beneath(proc_fd, root_fd, fd);
}

/* a component is a plain name: not empty, not "." or ".." */
static int corral_walk_plain(const char *name)
{
    return name[0] != '\0' && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

static int corral_walk_open(int root_fd, const char *path, size_t len, int flags, int proc_fd,
                            const char *root_name, uint64_t root_dev, uint64_t root_ino)
{
    char names[4096];
    char *name, *slash;
    struct stat info;
    int top = root_fd, fd, kind, saved;

    if (path == NULL || root_name == NULL || len == 0 || len >= sizeof names ||
        strnlen(path, len + 1) != len ||
        proc_fd < 0 || (flags & ~CORRAL_WALK_FLAGS) != 0 || (flags & O_ACCMODE) == O_ACCMODE) {
        errno = EINVAL;
        return -1;
    }
    memcpy(names, path, len + 1);
    name = names;
    slash = strchr(name, '/');
    while (slash != NULL) {
        *slash = '\0';
        if (!corral_walk_plain(name)) {
            fd = -1;
            errno = EINVAL;
        } else {
            fd = openat(top, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (top != root_fd) {
            saved = errno;
            close(top);
            errno = saved;
        }
        if (fd < 0)
            return -1;
        top = fd;
#if defined(CORRAL_TEST_HOOKS)
        if (corral_walk_hook != NULL)
            corral_walk_hook(fd, name);
#endif
        name = slash + 1;
        slash = strchr(name, '/');
    }
    if (!corral_walk_plain(name)) {
        fd = -1;
        errno = EINVAL;
    } else {
        fd = openat(top, name, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    }
    if (top != root_fd) {
        saved = errno;
        close(top);
        errno = saved;
    }
    if (fd < 0)
        return -1;
    if (fstat(fd, &info) != 0)
        goto refuse;
    kind = info.st_mode & S_IFMT;
    if (!(kind == S_IFREG || (kind == S_IFDIR && info.st_nlink > 0))) {
        errno = EINVAL; /* a special file, a removed directory: the walk says which */
        goto refuse;
    }
    if (top == root_fd)
        return fd; /* one name, looked up in the root's own fd: no directory to move out */
    switch (corral_walk_beneath(proc_fd, root_fd, fd, path, len, root_name, root_dev, root_ino)) {
    case 1:
        return fd;
    case 0:
        errno = EXDEV; /* not shown beneath: the walk starts again, or refuses */
        break;
    default:
        break; /* no name to compare: the walk checks another way */
    }
refuse:
    saved = errno;
    close(fd);
    errno = saved;
    return -1;
}
#else
static int corral_walk_beneath(int proc_fd, int root_fd, int fd, const char *path, size_t len,
                               const char *root_name, uint64_t root_dev, uint64_t root_ino)
{
    (void)path; (void)len; (void)root_name; (void)root_dev; (void)root_ino;
    return corral_fd_beneath(proc_fd, root_fd, fd);
}

static int corral_walk_open(int root_fd, const char *path, size_t len, int flags, int proc_fd,
                            const char *root_name, uint64_t root_dev, uint64_t root_ino)
{
    (void)root_fd; (void)path; (void)len; (void)flags; (void)proc_fd; (void)root_name;
    (void)root_dev; (void)root_ino;
    errno = ENOSYS;
    return -1;
}
#endif
