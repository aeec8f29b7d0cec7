/* COBS framing and CRC-16/CCITT-FALSE; see frame.h. */
#include "frame.h"

uint16_t frame_crc16(const uint8_t *data, size_t len)
{
    uint16_t crc = 0xFFFF;
    for (size_t i = 0; i < len; i++) {
        crc ^= (uint16_t)data[i] << 8;
        for (int bit = 0; bit < 8; bit++)
            crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
}

static size_t cobs_encode(const uint8_t *in, size_t len, uint8_t *out)
{
    size_t code_at = 0, o = 1;
    uint8_t code = 1;
    for (size_t i = 0; i < len; i++) {
        if (in[i] == 0) {
            out[code_at] = code;
            code_at = o++;
            code = 1;
            continue;
        }
        out[o++] = in[i];
        if (++code == 0xFF) {
            out[code_at] = code;
            code_at = o++;
            code = 1;
        }
    }
    out[code_at] = code;
    return o;
}

size_t frame_encode(const uint8_t *payload, size_t len, uint8_t *out)
{
    uint8_t raw[FRAME_MAX];
    if (len + 2 > FRAME_MAX)
        return 0;
    for (size_t i = 0; i < len; i++)
        raw[i] = payload[i];
    uint16_t crc = frame_crc16(payload, len);
    raw[len] = (uint8_t)(crc >> 8);
    raw[len + 1] = (uint8_t)crc;
    size_t n = cobs_encode(raw, len + 2, out);
    out[n++] = 0;
    return n;
}

int frame_decode(const uint8_t *in, size_t len, uint8_t *out)
{
    size_t i = 0, o = 0;
    while (i < len) {
        uint8_t code = in[i];
        if (code == 0 || i + code > len)
            return -1;
        for (size_t k = 1; k < code; k++) {
            if (o >= FRAME_MAX)
                return -1;
            out[o++] = in[i + k];
        }
        i += code;
        if (code < 0xFF && i < len) {
            if (o >= FRAME_MAX)
                return -1;
            out[o++] = 0;
        }
    }
    if (o < 4)
        return -1;
    uint16_t crc = (uint16_t)((out[o - 2] << 8) | out[o - 1]);
    if (frame_crc16(out, o - 2) != crc)
        return -1;
    return (int)(o - 2);
}
