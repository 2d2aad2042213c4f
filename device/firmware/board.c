/*
 * Scoring board firmware for an ATmega328P (Arduino Uno class board).
 *
 * Plain C with avr-libc.  The wire protocol is described in
 * device/PROTOCOL.md; the pin map is at the top of this file and in
 * PROTOCOL.md.  The same .elf that the tests run under simavr is the one
 * whose .hex is flashed onto a real board.
 *
 * Design, in short:
 *  - UART receive and transmit are interrupt driven through ring buffers;
 *    the main loop parses lines and answers.
 *  - Timer0 gives a 1 ms tick; its interrupt samples and debounces the
 *    buttons, so a press is seen even while the main loop is busy.
 *  - When there is nothing to do the CPU sleeps (idle mode) until the next
 *    interrupt: a received byte or the tick.
 *  - The watchdog resets the board if the main loop ever stops running.
 */
#include <avr/eeprom.h>
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include <avr/wdt.h>
#include <stdint.h>
#include <string.h>

#ifdef SIMAVR_MCU_SECTION
/* Tells simavr which chip and clock this is (the Makefile passes the header's
 * path when simavr's headers are installed).  The section lies outside flash
 * and is left out of the .hex flashed onto a real board. */
#include SIMAVR_MCU_SECTION
AVR_MCU(F_CPU, "atmega328p");
#endif

#define MODEL "TTB1"
#define FIRMWARE_VERSION "1.1"
#define PROTOCOL_VERSION "1"
#define SEATS 4
#define BUTTONS 7

#define BAUD 115200UL
#define LINE_MAX 40        /* longest accepted frame, without the newline */
#define RX_SIZE 64         /* power of two */
#define TX_SIZE 256        /* power of two */
#define EVENT_QUEUE 255    /* unacknowledged button events kept: minutes of presses */
#define EVENT_WINDOW 8     /* oldest unacknowledged events resent per heartbeat */
#define DEBOUNCE_MS 20     /* a button must read the same for this long */
#define HEARTBEAT_MS 250   /* board heartbeat period */
#define HOST_LOST_MS 2000  /* no valid frame from the host for this long */

#define ENQ 0x05           /* raw presence probe, answered with ACK at once */
#define ACK 0x06

/* ---- pin map ------------------------------------------------------------
 * Seat LEDs        PC0..PC3 (A0..A3)      seat 0..3, high = lit
 * Meld LED         PB0 (D8)               initial meld reached
 * Warning LED      PB1 (D9)               invalid table / warning
 * Round-over LED   PC4 (A4)
 * MAX7219 display  PB2 LOAD (D10), PB3 DIN (D11), PB5 CLK (D13): 4 digits
 * Buttons (to GND, internal pull-ups):
 *   PD2 END, PD3 UNDO, PD4 OUT, PD5 S0, PD6 S1, PD7 S2, PC5 S3
 */
#define FLAG_MELD 0x01
#define FLAG_WARNING 0x02
#define FLAG_ROUND_OVER 0x04

static const char *const button_names[BUTTONS] = {"END", "UNDO", "OUT", "S0", "S1", "S2", "S3"};

/* ---- state shared with interrupts -------------------------------------- */
static volatile uint8_t rx_buf[RX_SIZE];
static volatile uint8_t rx_head, rx_tail;
static volatile uint8_t rx_overflow;
static volatile uint8_t tx_buf[TX_SIZE];
static volatile uint8_t tx_head, tx_tail;
static volatile uint32_t uptime_ms;
static volatile uint8_t buttons_pressed; /* bit per button: a debounced press happened */

/* ---- main-loop state ---------------------------------------------------- */
static char line[LINE_MAX + 1];
static uint8_t line_len;
static uint8_t line_bad;
#define LINE_OVERLONG 0x01
#define LINE_GARBAGE 0x02

static int8_t seat = -1;
static uint8_t flags;
static char display[4] = {' ', ' ', ' ', ' '};
static uint8_t brightness = 8;
static uint8_t host_lost = 1;
static uint32_t last_host_ms;
static uint16_t boot_count;
static uint16_t errors;

/* Numbers are consecutive, so a ring of button indexes is enough: event i
 * (from the oldest) is number oldest_event + i. */
static uint8_t events[EVENT_QUEUE];
static uint8_t event_first; /* ring index of the oldest */
static uint8_t event_count;
static uint16_t oldest_event = 1;
static uint16_t next_event = 1;
static uint16_t dropped_events;

uint8_t reset_cause __attribute__((section(".noinit")));

/* The watchdog stays armed across its own reset: turn it off before main. */
void early_init(void) __attribute__((naked, used, section(".init3")));
void early_init(void) {
    reset_cause = MCUSR;
    MCUSR = 0;
    wdt_disable();
}

/* ---- UART ---------------------------------------------------------------- */
static void tx_push_isr(uint8_t byte) {
    uint8_t next = (uint8_t)(tx_head + 1) & (TX_SIZE - 1);
    if (next != tx_tail) {
        tx_buf[tx_head] = byte;
        tx_head = next;
        UCSR0B |= _BV(UDRIE0);
    }
}

ISR(USART_RX_vect) {
    uint8_t status = UCSR0A;
    uint8_t byte = UDR0;
    if (status & (_BV(FE0) | _BV(DOR0))) rx_overflow = 1;
    if (byte == ENQ) { /* the latency floor: answered without parsing */
        tx_push_isr(ACK);
        return;
    }
    uint8_t next = (uint8_t)(rx_head + 1) & (RX_SIZE - 1);
    if (next == rx_tail) {
        rx_overflow = 1; /* the line in progress is now incomplete */
        return;
    }
    rx_buf[rx_head] = byte;
    rx_head = next;
}

ISR(USART_UDRE_vect) {
    if (tx_head == tx_tail) {
        UCSR0B &= (uint8_t)~_BV(UDRIE0);
        return;
    }
    UDR0 = tx_buf[tx_tail];
    tx_tail = (uint8_t)(tx_tail + 1) & (TX_SIZE - 1);
}

static int16_t rx_get(void) {
    int16_t byte = -1;
    cli();
    if (rx_head != rx_tail) {
        byte = rx_buf[rx_tail];
        rx_tail = (uint8_t)(rx_tail + 1) & (RX_SIZE - 1);
    }
    sei();
    return byte;
}

/* Blocks while the buffer is full: the UART always drains it (on a real
 * board into the USB bridge), and the watchdog catches a stuck one. */
static void tx_put(uint8_t byte) {
    for (;;) {
        cli();
        uint8_t next = (uint8_t)(tx_head + 1) & (TX_SIZE - 1);
        if (next != tx_tail) {
            tx_buf[tx_head] = byte;
            tx_head = next;
            UCSR0B |= _BV(UDRIE0);
            sei();
            return;
        }
        uint8_t tail = tx_tail;
        sei();
        /* Waited for with interrupts on: a cli() straight after the sei()
         * can keep the UART's interrupt out for good (simavr takes it only
         * two instructions after sei), and the watchdog would reset us. */
        while (tx_tail == tail) {
        }
    }
}

static void uart_init(void) {
    UCSR0A = _BV(U2X0);
    UBRR0 = (uint16_t)((F_CPU / (8UL * BAUD)) - 1);
    UCSR0B = _BV(RXEN0) | _BV(TXEN0) | _BV(RXCIE0);
    UCSR0C = _BV(UCSZ01) | _BV(UCSZ00); /* 8N1 */
}

/* ---- frames out ---------------------------------------------------------- */
static char out[72];
static uint8_t out_len;

static uint8_t crc8(const char *data, uint8_t length) {
    /* CRC-8, polynomial 0x07, initial value 0 (CRC-8/SMBUS) */
    uint8_t crc = 0;
    for (uint8_t i = 0; i < length; i++) {
        crc ^= (uint8_t)data[i];
        for (uint8_t bit = 0; bit < 8; bit++)
            crc = (crc & 0x80) ? (uint8_t)((crc << 1) ^ 0x07) : (uint8_t)(crc << 1);
    }
    return crc;
}

static const char hex_digits[] = "0123456789ABCDEF";

static void out_start(const char *kind) {
    out_len = 0;
    while (*kind) out[out_len++] = *kind++;
}

static void out_text(const char *text) {
    out[out_len++] = ' ';
    while (*text && out_len < sizeof(out) - 4) out[out_len++] = *text++;
}

static void out_hex(uint32_t value, uint8_t digits) {
    out[out_len++] = ' ';
    for (int8_t shift = (int8_t)(4 * (digits - 1)); shift >= 0; shift -= 4)
        out[out_len++] = hex_digits[(value >> shift) & 0x0F];
}

static void out_send(void) {
    uint8_t crc = crc8(out, out_len);
    out[out_len++] = '*';
    out[out_len++] = hex_digits[crc >> 4];
    out[out_len++] = hex_digits[crc & 0x0F];
    out[out_len++] = '\n';
    for (uint8_t i = 0; i < out_len; i++) tx_put((uint8_t)out[i]);
}

static uint32_t now_ms(void) {
    cli();
    uint32_t now = uptime_ms;
    sei();
    return now;
}

/* seq < 0: the frame's sequence number could not be read */
static void send_error(int16_t seq, const char *code) {
    errors++;
    out_start("ER");
    if (seq < 0) out_text("--");
    else out_hex((uint32_t)seq, 2);
    out_text(code);
    out_send();
}

static void start_ok(uint8_t seq, const char *command) {
    out_start("OK");
    out_hex(seq, 2);
    out_text(command);
}

/* index: position from the oldest unacknowledged event */
static void send_event(uint8_t index) {
    uint8_t slot = (uint8_t)((event_first + index) % EVENT_QUEUE);
    out_start("EV");
    out_hex((uint16_t)(oldest_event + index), 4);
    out_text(button_names[events[slot]]);
    out_send();
}

/* The host delivers events only in order, so the oldest few are the ones
 * worth the line's time; a long backlog follows as they are acknowledged. */
static void send_events(uint8_t from, uint8_t to) {
    if (to > event_count) to = event_count;
    if (to > EVENT_WINDOW) to = EVENT_WINDOW;
    for (uint8_t i = from; i < to; i++) send_event(i);
}

static void out_oldest_event(void) {
    if (event_count) out_hex(oldest_event, 4);
    else out_text("-");
}

static void send_hello(const char *kind, int16_t seq) {
    out_start(kind);
    if (seq >= 0) {
        out_hex((uint32_t)seq, 2);
        out_text("HELLO");
    }
    out_text(MODEL);
    out_text(FIRMWARE_VERSION);
    out_text(PROTOCOL_VERSION);
    out_hex(SEATS, 1);
    out_hex(BUTTONS, 1);
    out_hex(boot_count, 4);
    out_hex(now_ms(), 8);
    out_hex(next_event, 4);
    out_oldest_event();
    out_hex(reset_cause, 2);
    out_send();
}

/* ---- outputs --------------------------------------------------------------- */
static void spi_send(uint8_t byte) {
    SPDR = byte;
    while (!(SPSR & _BV(SPIF))) {
    }
}

static void max7219_write(uint8_t reg, uint8_t value) {
    PORTB &= (uint8_t)~_BV(PB2);
    spi_send(reg);
    spi_send(value);
    PORTB |= _BV(PB2); /* the MAX7219 latches on LOAD's rising edge */
}

static uint8_t code_b(char c) {
    /* the MAX7219's Code-B font: 0-9 - E H L P and blank */
    if (c >= '0' && c <= '9') return (uint8_t)(c - '0');
    switch (c) {
    case '-': return 0x0A;
    case 'E': return 0x0B;
    case 'H': return 0x0C;
    case 'L': return 0x0D;
    case 'P': return 0x0E;
    default: return 0x0F;
    }
}

static void show_display(void) {
    static const char lost_text[4] = {'-', '-', '-', '-'};
    const char *text = host_lost ? lost_text : display;
    for (uint8_t digit = 0; digit < 4; digit++) max7219_write((uint8_t)(digit + 1), code_b(text[digit]));
}

static void show_leds(void) {
    uint8_t c = PORTC & (uint8_t)~0x1F;
    if (seat >= 0) c |= (uint8_t)_BV(seat);
    if (flags & FLAG_ROUND_OVER) c |= _BV(PC4);
    PORTC = c;
    uint8_t b = PORTB & (uint8_t)~(_BV(PB0) | _BV(PB1));
    if (flags & FLAG_MELD) b |= _BV(PB0);
    if (flags & FLAG_WARNING) b |= _BV(PB1);
    PORTB = b;
}

static void outputs_init(void) {
    DDRC = 0x1F;                      /* PC0..PC4 LEDs, PC5 button */
    PORTC = _BV(PC5);                 /* pull-up */
    DDRB = _BV(PB0) | _BV(PB1) | _BV(PB2) | _BV(PB3) | _BV(PB5);
    PORTB = _BV(PB2);                 /* LOAD idles high */
    DDRD = 0;                         /* PD0/PD1 belong to the UART */
    PORTD = 0xFC;                     /* pull-ups on the buttons */
    SPCR = _BV(SPE) | _BV(MSTR) | _BV(SPR0);
    max7219_write(0x0F, 0);           /* display test off */
    max7219_write(0x0C, 1);           /* leave shutdown */
    max7219_write(0x09, 0x0F);        /* Code-B decoding on digits 0-3 */
    max7219_write(0x0B, 3);           /* scan digits 0-3 */
    max7219_write(0x0A, brightness);
    show_display();
    show_leds();
}

/* ---- buttons (sampled by the 1 ms tick) ------------------------------------ */
static uint8_t read_buttons(void) {
    uint8_t raw = (uint8_t)(~PIND >> 2) & 0x3F;
    if (!(PINC & _BV(PC5))) raw |= 0x40;
    return raw; /* bit set = held down */
}

ISR(TIMER0_COMPA_vect) {
    static uint8_t stable;
    static uint8_t counts[BUTTONS];
    uptime_ms++;
    uint8_t raw = read_buttons();
    for (uint8_t i = 0; i < BUTTONS; i++) {
        uint8_t mask = (uint8_t)_BV(i);
        if ((raw ^ stable) & mask) {
            if (++counts[i] >= DEBOUNCE_MS) {
                stable ^= mask;
                counts[i] = 0;
                if (stable & mask) buttons_pressed |= mask;
            }
        } else {
            counts[i] = 0;
        }
    }
}

static void timer_init(void) {
    TCCR0A = _BV(WGM01);              /* CTC */
    TCCR0B = _BV(CS01) | _BV(CS00);   /* clk/64 */
    OCR0A = (uint8_t)(F_CPU / 64 / 1000 - 1);
    TIMSK0 = _BV(OCIE0A);
}

static void queue_presses(void) {
    cli();
    uint8_t pressed = buttons_pressed;
    buttons_pressed = 0;
    sei();
    for (uint8_t i = 0; i < BUTTONS; i++) {
        if (!(pressed & _BV(i))) continue;
        if (event_count == EVENT_QUEUE) {
            /* kept out of the numbering, so the host sees no gap; it reads
             * the count in STATUS and reports it */
            dropped_events++;
            continue;
        }
        if (!event_count) oldest_event = next_event;
        events[(uint8_t)((event_first + event_count) % EVENT_QUEUE)] = i;
        next_event++;
        event_count++;
        send_events((uint8_t)(event_count - 1), event_count);
    }
}

/* ---- parsing ----------------------------------------------------------------- */
static int16_t hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* parses exactly `length` hex digits; -1 if any is not one */
static int32_t parse_hex(const char *text, uint8_t length) {
    int32_t value = 0;
    for (uint8_t i = 0; i < length; i++) {
        int16_t digit = hex_value(text[i]);
        if (digit < 0) return -1;
        value = (value << 4) | digit;
    }
    return value;
}

static void handle_command(uint8_t seq, const char *command, const char *arg, uint8_t arg_len) {
    if (!strcmp(command, "HELLO") && !arg_len) {
        send_hello("OK", seq);
    } else if (!strcmp(command, "PING") && !arg_len) {
        start_ok(seq, "PONG");
        out_hex(now_ms(), 8);
        out_send();
    } else if (!strcmp(command, "SEAT")) {
        if (arg_len == 1 && arg[0] == '-') seat = -1;
        else if (arg_len == 1 && arg[0] >= '0' && arg[0] < '0' + SEATS) seat = (int8_t)(arg[0] - '0');
        else { send_error(seq, "ARG"); return; }
        show_leds();
        start_ok(seq, "SEAT");
        out_send();
    } else if (!strcmp(command, "FLAGS")) {
        int32_t value = arg_len == 1 ? parse_hex(arg, 1) : -1;
        if (value < 0 || value > 7) { send_error(seq, "ARG"); return; }
        flags = (uint8_t)value;
        show_leds();
        start_ok(seq, "FLAGS");
        out_send();
    } else if (!strcmp(command, "SHOW")) {
        if (arg_len > 4) { send_error(seq, "ARG"); return; }
        for (uint8_t i = 0; i < arg_len; i++) {
            char c = arg[i];
            if (!((c >= '0' && c <= '9') || c == '-' || c == 'E' || c == 'H' || c == 'L' || c == 'P' || c == '_'))
                { send_error(seq, "ARG"); return; }
        }
        /* right-aligned, '_' is a blank digit */
        for (uint8_t i = 0; i < 4; i++) {
            int8_t source = (int8_t)(i - (4 - arg_len));
            display[i] = (source < 0 || arg[source] == '_') ? ' ' : arg[source];
        }
        show_display();
        start_ok(seq, "SHOW");
        out_send();
    } else if (!strcmp(command, "BRIGHT")) {
        int32_t value = arg_len == 1 ? parse_hex(arg, 1) : -1;
        if (value < 0) { send_error(seq, "ARG"); return; }
        brightness = (uint8_t)value;
        max7219_write(0x0A, brightness);
        start_ok(seq, "BRIGHT");
        out_send();
    } else if (!strcmp(command, "ACK")) {
        int32_t value = arg_len == 4 ? parse_hex(arg, 4) : -1;
        if (value < 0) { send_error(seq, "ARG"); return; }
        /* cumulative: every event up to `value` (in 16-bit serial order) is done */
        uint8_t done = 0;
        while (event_count && (int16_t)((uint16_t)value - oldest_event) >= 0) {
            event_first = (uint8_t)((event_first + 1) % EVENT_QUEUE);
            oldest_event++;
            event_count--;
            done++;
        }
        start_ok(seq, "ACK");
        out_oldest_event();
        out_send();
        /* the window slides: what just entered it goes out now, not at the
         * next heartbeat, so a backlog drains at the pace of the ACKs */
        if (done) send_events(done < EVENT_WINDOW ? (uint8_t)(EVENT_WINDOW - done) : 0, EVENT_WINDOW);
    } else if (!strcmp(command, "STATUS") && !arg_len) {
        start_ok(seq, "STATUS");
        if (seat < 0) out_text("-");
        else out_hex((uint32_t)seat, 1);
        out_hex(flags, 1);
        out_text("____");
        for (uint8_t i = 0; i < 4; i++)
            if (display[i] != ' ') out[out_len - 4 + i] = display[i];
        out_hex(brightness, 1);
        out_hex(event_count, 2);
        out_hex(dropped_events, 4);
        out_hex(errors, 4);
        out_send();
    } else {
        send_error(seq, "UNK");
    }
}

static void handle_line(void) {
    /* frame: SS CMD[ ARG]*CC  (SS sequence, CC CRC-8 of everything before '*') */
    if (line_len < 6 || line[line_len - 3] != '*') { send_error(-1, "SYN"); return; }
    int32_t crc = parse_hex(&line[line_len - 2], 2);
    uint8_t body_len = (uint8_t)(line_len - 3);
    if (crc < 0 || crc8(line, body_len) != (uint8_t)crc) { send_error(-1, "CRC"); return; }
    int32_t seq = parse_hex(line, 2);
    if (seq < 0 || line[2] != ' ') { send_error(-1, "SYN"); return; }
    /* a checked frame: the host is there */
    last_host_ms = now_ms();
    if (host_lost) {
        host_lost = 0;
        show_display();
    }
    line[body_len] = 0;
    char *command = &line[3];
    char *space = strchr(command, ' ');
    const char *arg = "";
    uint8_t arg_len = 0;
    if (space) {
        *space = 0;
        arg = space + 1;
        arg_len = (uint8_t)strlen(arg);
    }
    handle_command((uint8_t)seq, command, arg, arg_len);
}

static void handle_byte(uint8_t byte) {
    if (byte == '\n') {
        if (line_bad & LINE_OVERLONG) send_error(-1, "LONG");
        else if (line_bad & LINE_GARBAGE) send_error(-1, "BYTE");
        else if (line_len) handle_line();
        line_len = 0;
        line_bad = 0;
    } else if (byte == '\r') {
        /* tolerated: terminals send CR LF */
    } else if (byte < 0x20 || byte > 0x7E) {
        line_bad |= LINE_GARBAGE;
    } else if (line_len >= LINE_MAX) {
        line_bad |= LINE_OVERLONG;
    } else {
        line[line_len++] = (char)byte;
    }
}

int main(void) {
    boot_count = (uint16_t)(eeprom_read_word((uint16_t *)0) + 1);
    eeprom_update_word((uint16_t *)0, boot_count);
    outputs_init();
    uart_init();
    timer_init();
    wdt_enable(WDTO_500MS);
    set_sleep_mode(SLEEP_MODE_IDLE);
    sei();
    send_hello("HI", -1); /* boot banner; a host that opens the port later pings instead */

    uint32_t last_heartbeat = 0;
    for (;;) {
        wdt_reset();
        int16_t byte;
        while ((byte = rx_get()) >= 0) {
            if (rx_overflow) { /* bytes were lost: the line in progress is garbage */
                cli();
                rx_overflow = 0;
                sei();
                line_bad |= LINE_GARBAGE;
            }
            handle_byte((uint8_t)byte);
        }
        queue_presses();
        uint32_t now = now_ms();
        if (now - last_heartbeat >= HEARTBEAT_MS) {
            last_heartbeat = now;
            out_start("HB");
            out_hex(now, 8);
            out_hex(next_event, 4);
            out_hex(event_count, 2);
            out_send();
            /* unacknowledged events go out again until the host confirms them */
            send_events(0, EVENT_WINDOW);
            if (!host_lost && now - last_host_ms >= HOST_LOST_MS) {
                host_lost = 1;
                show_display();
            }
        }
        cli();
        if (rx_head == rx_tail && !buttons_pressed) {
            sleep_enable();
            sei(); /* the instruction after sei runs first: no wake-up is missed */
            sleep_cpu();
            sleep_disable();
        }
        sei();
    }
}
