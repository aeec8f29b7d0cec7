/*
 * linewatch: report every level a set of gpio-sim lines takes, however briefly.
 *
 *   linewatch /sys/devices/platform/gpio-sim.0/gpiochip0/sim_gpio17/value [...]
 *
 * Prints the initial level of each file, then one line per change, flushed at once:
 *
 *   <CLOCK_MONOTONIC ns> <index of the file in argv> <0|1>
 *
 * gpio-sim's sysfs `value` is the level a line is driven to (or its pull when nobody drives
 * it). It signals no change, so the files are polled with pread in a tight loop; that catches
 * states that last a few milliseconds, such as an output at its safe level between an agent's
 * SIGTERM handler and the release of the line. Exits with 0 on SIGTERM or SIGINT.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stopping;

static void stop(int signum) {
    (void)signum;
    stopping = 1;
}

static int level(int fd, const char *path) {
    char text[4];
    ssize_t n = pread(fd, text, sizeof text, 0);
    if (n < 1) {
        fprintf(stderr, "linewatch: cannot read %s\n", path);
        exit(2);
    }
    return text[0] == '1';
}

static void report(int index, int value) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    printf("%lld %d %d\n", (long long)now.tv_sec * 1000000000LL + now.tv_nsec, index, value);
    fflush(stdout);
}

int main(int argc, char **argv) {
    int count = argc - 1;
    int fds[64], last[64];
    if (count < 1 || count > 64) {
        fprintf(stderr, "usage: linewatch VALUE_FILE... (1 to 64 files)\n");
        return 2;
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = stop;
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    for (int i = 0; i < count; i++) {
        fds[i] = open(argv[i + 1], O_RDONLY);
        if (fds[i] < 0) {
            perror(argv[i + 1]);
            return 2;
        }
        last[i] = level(fds[i], argv[i + 1]);
        report(i, last[i]);
    }
    while (!stopping) {
        for (int i = 0; i < count; i++) {
            int value = level(fds[i], argv[i + 1]);
            if (value != last[i]) {
                last[i] = value;
                report(i, value);
            }
        }
    }
    return 0;
}
