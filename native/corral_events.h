/* The kernel watch's events: corral_watch_one_replace tells a read that is
 * exactly one replace (a temporary name made, moved away and arriving at
 * an awaited name) from any other in one pass of fixed comparisons, where
 * Python would make a dozen calls.  Each header is copied out with memcpy
 * (the buffer need not be aligned); every offset is checked against len
 * before it is read. */

#include <stdint.h>
#include <string.h>

#define CORRAL_IN_MOVED_FROM 0x40u
#define CORRAL_IN_MOVED_TO 0x80u
#define CORRAL_IN_CREATE 0x100u
#define CORRAL_EVENT_SIZE 16

struct corral_event_head {
    int32_t wd;
    uint32_t mask;
    uint32_t cookie;
    uint32_t len;
};

static int corral_watch_one_replace(const char *buf, int64_t len, int32_t wd,
                                    const char *arrival, int64_t alen)
{
    struct corral_event_head made, gone, came;
    int64_t second, third;

    if (buf == NULL || arrival == NULL || len < 3 * CORRAL_EVENT_SIZE || alen < 4)
        return 0;
    memcpy(&made, buf, sizeof made);
    if (made.wd != wd || made.mask != CORRAL_IN_CREATE || made.cookie != 0 || made.len == 0)
        return 0;
    second = CORRAL_EVENT_SIZE + (int64_t)made.len;  /* the move away, of a name as long */
    third = second + second;                         /* the arrival */
    if (len != third + 12 + alen || buf[CORRAL_EVENT_SIZE] == '\0')
        return 0;
    memcpy(&gone, buf + second, sizeof gone);
    memcpy(&came, buf + third, sizeof came);
    if (gone.wd != wd || gone.mask != CORRAL_IN_MOVED_FROM || came.wd != wd ||
        came.mask != CORRAL_IN_MOVED_TO)
        return 0;
    if (memcmp(buf + 12, buf + second + 12, (size_t)made.len + 4) != 0)
        return 0;
    return memcmp(buf + third + 12, arrival, (size_t)alen) == 0;
}

/* How many bytes of events wait on the inotify instance fd (FIONREAD), or
 * -1 (errno set) when the kernel cannot say: one call from Python whose
 * answer is an int as it stands, where fcntl.ioctl needs a buffer made,
 * filled and compared on every call of a call's freshness check. */
#include <sys/ioctl.h>

static int corral_watch_queued(int fd)
{
    int queued = 0;

    if (ioctl(fd, FIONREAD, &queued) != 0)
        return -1;
    return queued;
}
