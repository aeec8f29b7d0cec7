/* A small simavr front end for the Arduino Uno (ATmega328P at 16 MHz) used by edge-agent's tests.
 *
 *   avr-emulator [--link PATH] [--boot OPTIBOOT.hex] [--no-autoreset] [FIRMWARE.elf|.hex]
 *
 * The firmware is an ELF file or an Intel hex file (a stock prebuilt sketch, such as
 * StandardFirmata.cpp.hex), loaded at address 0.
 * UART0 is bridged to a pseudo-terminal (libsimavrparts' uart_pty); the path is printed as
 * "pty /dev/pts/N" and, with --link, also made available as a symlink at PATH (so a test can
 * restart the emulator behind a stable name, like udev's /dev/serial/by-id). The simulation runs
 * in real time and starts paused, so the host can open the port first. Commands on stdin:
 *   start              run
 *   pin D2 1           drive an input pin (D0..D13, A0..A5) high or low
 *   adc A0 2500        set an ADC input in millivolts
 *   autoreset 0        cut (0) or restore (1) the reset on open, like the Uno's RESET-EN trace
 *   quit
 * On stdout, one line per output-pin change: "edge D13 1 <simulated microseconds>".
 * With --boot, the Intel hex bootloader is loaded at its own address and the CPU starts there
 * (Optiboot: a STK500v1 upload over the pty, then the new sketch runs).
 *
 * Reset on open (auto-reset). A real Uno resets whenever the host opens its serial port: opening
 * a tty raises DTR (and RTS), and the Uno couples DTR's edge through a 100 nF capacitor to the
 * RESET pin; closing it drops DTR, which resets nothing. A pty has no DTR, so the front end
 * watches the port itself: libsimavrparts' uart_pty keeps the slave side open in this process
 * (so the master never sees a hang-up), and inotify on the slave node reports every open and
 * close by other processes. When the count of host opens goes from 0 to 1 the AVR is reset as
 * by its RESET pin (MCUSR.EXTRF set, the CPU at the reset vector: with --boot the bootloader
 * runs first and starts the sketch, as on a real board; without, the sketch starts at once).
 * The front end prints "reset <simulated microseconds>", then "edge <pin> 0" for every output it
 * had reported high (a reset makes every pin a high-impedance input: whatever it drove is off).
 * An open before "start" is the power-on state, not a reset. --no-autoreset (or "autoreset 0")
 * models a board with auto-reset disabled (RESET-EN cut, or a capacitor from RESET to 5 V),
 * which keeps its levels across opens. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include <simavr/avr_adc.h>
#include <simavr/avr_ioport.h>
#include <simavr/parts/uart_pty.h>
#include <simavr/sim_avr.h>
#include <simavr/sim_core.h>
#include <simavr/sim_elf.h>
#include <simavr/sim_hex.h>
#include <simavr/sim_time.h>

#define MCUSR_ADDR 0x54 /* ATmega328P data-space address of MCUSR */
#define WDTCSR_ADDR 0x60
#define EXTRF 0x02
#define WDE 0x08
#define WDCE 0x10

static avr_t *avr;
static uart_pty_t uart;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static char queue[16][64];
static int queue_len;
static volatile int running, quitting;
static int autoreset = 1, port_watch = -1, host_opens;
static int last_level[3][8];
static const char port_names[3] = {'B', 'C', 'D'};
static const uint8_t ddr_addr[3] = {0x24, 0x27, 0x2A};

/* Arduino name for port/bit: PD0..7 = D0..7, PB0..5 = D8..13, PC0..5 = A0..5. */
static void pin_label(int port, int bit, char *out, size_t cap)
{
    if (port == 2)
        snprintf(out, cap, "D%d", bit);
    else if (port == 0)
        snprintf(out, cap, "D%d", bit + 8);
    else
        snprintf(out, cap, "A%d", bit);
}

static int parse_pin(const char *name, int *port, int *bit)
{
    int n;
    if (sscanf(name, "D%d", &n) == 1 && n >= 0 && n <= 13) {
        *port = n < 8 ? 2 : 0;
        *bit = n < 8 ? n : n - 8;
        return 0;
    }
    if (sscanf(name, "A%d", &n) == 1 && n >= 0 && n <= 5) {
        *port = 1;
        *bit = n;
        return 0;
    }
    return -1;
}

static void pin_changed(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    int port = (int)(intptr_t)param >> 3, bit = (int)(intptr_t)param & 7;
    if (!(avr->data[ddr_addr[port]] & (1u << bit)))
        return; /* only outputs: inputs are what we drive */
    if (last_level[port][bit] == (int)value)
        return;
    last_level[port][bit] = (int)value;
    char label[8];
    pin_label(port, bit, label, sizeof label);
    printf("edge %s %u %llu\n", label, value,
           (unsigned long long)(avr_cycles_to_nsec(avr, avr->cycle) / 1000));
    fflush(stdout);
}

static void *read_commands(void *arg)
{
    (void)arg;
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        pthread_mutex_lock(&queue_lock);
        if (queue_len < 16)
            snprintf(queue[queue_len++], sizeof queue[0], "%s", line);
        pthread_mutex_unlock(&queue_lock);
    }
    quitting = 1; /* stdin closed: the test that owned us is gone */
    return NULL;
}

static void run_command(const char *line)
{
    char word[16], name[8];
    unsigned value;
    int port, bit;
    if (sscanf(line, "%15s", word) != 1)
        return;
    if (!strcmp(word, "start")) {
        running = 1;
    } else if (!strcmp(word, "autoreset") && sscanf(line, "autoreset %u", &value) == 1) {
        autoreset = value != 0;
    } else if (!strcmp(word, "quit")) {
        quitting = 1;
    } else if (!strcmp(word, "pin") && sscanf(line, "pin %7s %u", name, &value) == 2 &&
               !parse_pin(name, &port, &bit)) {
        avr_raise_irq(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(port_names[port]), bit), value);
    } else if (!strcmp(word, "adc") && sscanf(line, "adc A%d %u", &bit, &value) == 2 && bit >= 0 &&
               bit <= 5) {
        avr_raise_irq(avr_io_getirq(avr, AVR_IOCTL_ADC_GETIRQ, ADC_IRQ_ADC0 + bit), value);
    } else {
        fprintf(stderr, "avr-emulator: unknown command: %s", line);
        return;
    }
    printf("ok %s\n", word);
    fflush(stdout);
}

static void drain_commands(void)
{
    pthread_mutex_lock(&queue_lock);
    for (int i = 0; i < queue_len; i++)
        run_command(queue[i]);
    queue_len = 0;
    pthread_mutex_unlock(&queue_lock);
}

/* Watch the pty's slave node for opens and closes by the host (see the header comment). */
static void watch_port(const char *slave)
{
    port_watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (port_watch < 0 || inotify_add_watch(port_watch, slave, IN_OPEN | IN_CLOSE) < 0) {
        perror("avr-emulator: inotify on the pty (no reset on open)");
        port_watch = -1;
    }
}

/* Whether the host's opens of the port went from none to one since the last call (DTR rose). */
static int port_opened(void)
{
    char events[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    int opened = 0;
    ssize_t n;
    if (port_watch < 0)
        return 0;
    while ((n = read(port_watch, events, sizeof events)) > 0)
        for (char *at = events; at < events + n;) {
            const struct inotify_event *event = (const struct inotify_event *)at;
            if (event->mask & IN_OPEN)
                opened |= host_opens++ == 0;
            else if (event->mask & IN_CLOSE && host_opens > 0)
                host_opens--;
            at += sizeof *event + event->len;
        }
    return opened;
}

/* What DTR does to a real Uno through its reset capacitor: an external reset. Every pin becomes
   an input, so each output reported high is reported off. */
static void reset_as_by_dtr(void)
{
    avr_reset(avr);
    avr->pc = avr->reset_pc; /* the bootloader with --boot, else the sketch's vector */
    avr->data[MCUSR_ADDR] = EXTRF;
    avr->state = cpu_Running;
    printf("reset %llu\n", (unsigned long long)(avr_cycles_to_nsec(avr, avr->cycle) / 1000));
    for (int port = 0; port < 3; port++)
        for (int bit = 0; bit < 8; bit++)
            if (last_level[port][bit] == 1) {
                char label[8];
                pin_label(port, bit, label, sizeof label);
                last_level[port][bit] = 0;
                printf("edge %s 0 %llu\n", label,
                       (unsigned long long)(avr_cycles_to_nsec(avr, avr->cycle) / 1000));
            }
    fflush(stdout);
}

static uint64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int load_bootloader(const char *path)
{
    ihex_chunk_p chunks = NULL;
    int count = read_ihex_chunks(path, &chunks);
    if (count <= 0) {
        fprintf(stderr, "avr-emulator: cannot read %s\n", path);
        return -1;
    }
    uint32_t base = chunks[0].baseaddr;
    for (int i = 0; i < count; i++) {
        memcpy(avr->flash + chunks[i].baseaddr, chunks[i].data, chunks[i].size);
        if (chunks[i].baseaddr < base)
            base = chunks[i].baseaddr;
    }
    free_ihex_chunks(chunks);
    avr->pc = base;
    avr->reset_pc = base; /* a watchdog reset (Optiboot's exit) comes back here */
    avr->codeend = avr->flashend;
    avr->data[MCUSR_ADDR] = EXTRF; /* as if the reset button (or DTR) was pressed: Optiboot
                                      only listens after an external reset */
    return 0;
}

/* A sketch as Intel hex: every chunk at its own address, the CPU starting at 0. */
static int load_hex_firmware(const char *path)
{
    ihex_chunk_p chunks = NULL;
    int count = read_ihex_chunks(path, &chunks);
    if (count <= 0) {
        fprintf(stderr, "avr-emulator: cannot read %s\n", path);
        return -1;
    }
    uint32_t end = 0;
    for (int i = 0; i < count; i++) {
        if (chunks[i].baseaddr + chunks[i].size > avr->flashend + 1u) {
            fprintf(stderr, "avr-emulator: %s does not fit the flash\n", path);
            free_ihex_chunks(chunks);
            return -1;
        }
        memcpy(avr->flash + chunks[i].baseaddr, chunks[i].data, chunks[i].size);
        if (chunks[i].baseaddr + chunks[i].size > end)
            end = chunks[i].baseaddr + chunks[i].size;
    }
    free_ihex_chunks(chunks);
    avr->codeend = end;
    avr->pc = 0;
    return 0;
}

static int ends_with(const char *text, const char *suffix)
{
    size_t n = strlen(text), m = strlen(suffix);
    return n >= m && !strcmp(text + n - m, suffix);
}

/* Optiboot starts the sketch unless the reset was external (EXTRF): at its entry it reads and
   clears MCUSR and, without EXTRF, turns the watchdog off and jumps to address 0. Under simavr
   1.6 that exit does not hold: a jump to 0 may be reported as a crash (the reset vector is
   elsewhere, the bootloader's), the 16 ms watchdog Optiboot leaves through stays armed and
   resets the sketch moments after it starts, and after a reset on open (SRAM kept, as on a real
   chip) the WDRF path ran into the sketch's interrupt vectors and back into the bootloader,
   never starting it. So the front end takes that decision itself: when the CPU is at the
   bootloader's entry without EXTRF, or reaches address 0 from it, and a sketch is programmed,
   it does what appStart means to (MCUSR cleared, the watchdog off through the timed WDCE
   sequence) and runs the sketch. */
static int bootloader_handover(int state)
{
    int entry = avr->pc == avr->reset_pc && !(avr->data[MCUSR_ADDR] & EXTRF);
    if ((avr->pc != 0 && !entry) || (avr->flash[0] | avr->flash[1] << 8) == 0xffff)
        return state;
    avr_core_watch_write(avr, MCUSR_ADDR, 0);
    avr_core_watch_write(avr, WDTCSR_ADDR, WDCE | WDE);
    avr_core_watch_write(avr, WDTCSR_ADDR, 0);
    avr->pc = 0;
    fprintf(stderr, "avr-emulator: bootloader started the application\n");
    avr->state = cpu_Running;
    return cpu_Running;
}

int main(int argc, char **argv)
{
    const char *link = NULL, *boot = NULL, *elf = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--link") && i + 1 < argc)
            link = argv[++i];
        else if (!strcmp(argv[i], "--boot") && i + 1 < argc)
            boot = argv[++i];
        else if (!strcmp(argv[i], "--no-autoreset"))
            autoreset = 0;
        else
            elf = argv[i];
    }
    if (!elf && !boot) {
        fprintf(stderr, "usage: %s [--link PATH] [--boot BOOTLOADER.hex] [--no-autoreset] "
                "[FIRMWARE.elf|FIRMWARE.hex]\n", argv[0]);
        return 2;
    }
    avr = avr_make_mcu_by_name("atmega328p");
    if (!avr || avr_init(avr) != 0) {
        fprintf(stderr, "avr-emulator: no atmega328p core in this simavr\n");
        return 1;
    }
    avr->frequency = 16000000;
    avr->vcc = avr->avcc = avr->aref = 5000;
    if (elf && ends_with(elf, ".hex")) {
        if (load_hex_firmware(elf) != 0)
            return 1;
    } else if (elf) {
        elf_firmware_t fw;
        memset(&fw, 0, sizeof fw);
        if (elf_read_firmware(elf, &fw) != 0) {
            fprintf(stderr, "avr-emulator: cannot read %s\n", elf);
            return 1;
        }
        fw.frequency = 16000000;
        strcpy(fw.mmcu, "atmega328p");
        avr_load_firmware(avr, &fw);
    }
    if (boot && load_bootloader(boot) != 0)
        return 1;
    for (int port = 0; port < 3; port++)
        for (int bit = 0; bit < 8; bit++) {
            last_level[port][bit] = -1;
            avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(port_names[port]), bit),
                                    pin_changed, (void *)(intptr_t)(port << 3 | bit));
        }
    uart_pty_init(avr, &uart);
    uart_pty_connect(&uart, '0');
    if (link) {
        unlink(link);
        if (symlink(uart.pty.slavename, link) != 0)
            perror(link);
    }
    watch_port(uart.pty.slavename);
    printf("pty %s\n", uart.pty.slavename);
    fflush(stdout);

    pthread_t reader;
    pthread_create(&reader, NULL, read_commands, NULL);
    while (!running && !quitting) {
        port_opened(); /* an open before the start meets the power-on state: no reset; an open
                          after "ok start" is left to the running loop */
        drain_commands();
        usleep(1000);
    }
    uint64_t start = wall_ns();
    avr_cycle_count_t start_cycle = avr->cycle;
    int state = cpu_Running;
    for (unsigned n = 0; !quitting && state != cpu_Done && state != cpu_Crashed; n++) {
        state = avr_run(avr);
        if (boot && (state == cpu_Crashed || avr->pc == 0 || avr->pc == avr->reset_pc))
            state = bootloader_handover(state);
        if ((n & 1023) == 0) {
            drain_commands();
            if (port_opened() && autoreset) {
                reset_as_by_dtr();
                state = avr->state;
                start = wall_ns(); /* real-time pacing starts again with the reset */
                start_cycle = avr->cycle;
            }
            uint64_t sim = avr_cycles_to_nsec(avr, avr->cycle - start_cycle);
            uint64_t wall = wall_ns() - start;
            if (sim > wall + 1000000) { /* ahead of real time: wait */
                struct timespec ts = {0, (long)(sim - wall)};
                nanosleep(&ts, NULL);
            }
        }
    }
    if (state == cpu_Done || state == cpu_Crashed)
        fprintf(stderr, "avr-emulator: cpu %s at pc 0x%04x (cycle %llu, sp 0x%04x, flash[0] %02x%02x)\n",
                state == cpu_Done ? "stopped" : "crashed", avr->pc, (unsigned long long)avr->cycle,
                avr->data[0x5D] | avr->data[0x5E] << 8, avr->flash[1], avr->flash[0]);
    uart_pty_stop(&uart);
    if (link)
        unlink(link);
    return state == cpu_Crashed ? 1 : 0;
}
