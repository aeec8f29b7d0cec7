/* Runs the protocol core against the conformance vectors (firmware/conformance/vectors.txt).
 * Usage: vector_check FILE. Prints one line per case and "N passed, N failed"; exit 1 on failure.
 *
 * Directives (one per line, '#' starts a comment, text before '|' is for the Python side):
 *   case NAME | end           start a case on a fresh core at time 0 / finish it
 *   send ... | HEX            bytes from the host
 *   recv ... | HEX            exactly these bytes must come next from the firmware
 *   at MS                     advance the clock to MS and poll the core
 *   drive PIN LEVEL           external level on an input pin (then poll)
 *   adc PIN RAW               ADC value for a pin
 *   level PIN VALUE           output level (or PWM duty) the pin must have */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/proto.h"
#include "sim_board.h"

static uint8_t outbuf[4096];
static size_t out_len, out_pos;
static uint32_t now;

static void sink(const uint8_t *data, size_t len)
{
    if (out_len + len <= sizeof outbuf) {
        memcpy(outbuf + out_len, data, len);
        out_len += len;
    }
}

static size_t parse_hex(const char *text, uint8_t *out, size_t cap)
{
    size_t n = 0;
    const char *bar = strchr(text, '|');
    text = bar ? bar + 1 : text;
    char *end;
    while (n < cap) {
        long v = strtol(text, &end, 16);
        if (end == text)
            break;
        out[n++] = (uint8_t)v;
        text = end;
    }
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s VECTORS\n", argv[0]);
        return 2;
    }
    FILE *fh = fopen(argv[1], "r");
    if (!fh) {
        perror(argv[1]);
        return 2;
    }
    sim_uart_sink = sink;
    char line[2048], name[128] = "";
    int passed = 0, failed = 0, ok = 1, lineno = 0;
    while (fgets(line, sizeof line, fh)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char word[32];
        if (sscanf(line, "%31s", word) != 1)
            continue;
        const char *rest = line + strspn(line, " \t") + strlen(word);
        uint8_t bytes[1024];
        unsigned a, b;
        if (!strcmp(word, "case")) {
            sscanf(rest, "%127s", name);
            sim_reset();
            proto_init();
            now = 0;
            out_len = out_pos = 0;
            ok = 1;
        } else if (!strcmp(word, "send")) {
            size_t n = parse_hex(rest, bytes, sizeof bytes);
            for (size_t i = 0; i < n; i++)
                proto_rx_byte(bytes[i], now);
            proto_poll(now);
        } else if (!strcmp(word, "recv")) {
            size_t n = parse_hex(rest, bytes, sizeof bytes);
            if (out_len - out_pos < n || memcmp(outbuf + out_pos, bytes, n)) {
                fprintf(stderr, "%s line %d: expected", name, lineno);
                for (size_t i = 0; i < n; i++)
                    fprintf(stderr, " %02x", bytes[i]);
                fprintf(stderr, "\n  got");
                for (size_t i = out_pos; i < out_len; i++)
                    fprintf(stderr, " %02x", outbuf[i]);
                fprintf(stderr, "\n");
                ok = 0;
            }
            out_pos = out_len - out_pos < n ? out_len : out_pos + n;
        } else if (!strcmp(word, "at") && sscanf(rest, "%u", &a) == 1) {
            now = a;
            proto_poll(now);
        } else if (!strcmp(word, "drive") && sscanf(rest, "%u %u", &a, &b) == 2) {
            sim_drive((uint8_t)a, (uint8_t)b);
            proto_poll(now);
        } else if (!strcmp(word, "adc") && sscanf(rest, "%u %u", &a, &b) == 2) {
            sim_set_adc((uint8_t)a, (uint16_t)b);
        } else if (!strcmp(word, "level") && sscanf(rest, "%u %u", &a, &b) == 2) {
            if (sim_level((uint8_t)a) != (int)b) {
                fprintf(stderr, "%s line %d: pin %u is %d, expected %u\n", name, lineno, a,
                        sim_level((uint8_t)a), b);
                ok = 0;
            }
        } else if (!strcmp(word, "end")) {
            if (out_pos != out_len) {
                fprintf(stderr, "%s: %zu unexpected bytes from the firmware\n", name,
                        out_len - out_pos);
                ok = 0;
            }
            printf("%s %s\n", ok ? "PASS" : "FAIL", name);
            ok ? passed++ : failed++;
        } else {
            fprintf(stderr, "line %d: unknown directive %s\n", lineno, word);
            return 2;
        }
    }
    fclose(fh);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
