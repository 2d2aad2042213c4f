/*
 * Runs the scoring board firmware in simavr and makes it usable from a test.
 *
 *   runner FIRMWARE.elf [BOOT_COUNT]
 *
 * simavr's own command gives no serial port; this runner links libsimavr and
 * libsimavrparts, bridges the firmware's UART0 to a pseudo-terminal, and
 * speaks a line protocol on stdin/stdout (one line per event, flushed):
 *
 *   stdout  READY <pty>          the pty to open (use this, not the fixed
 *                                /tmp/simavr-uart0 link: parallel runs collide)
 *           PIN <port><bit> <0|1> a port pin changed (the LEDs, MAX7219 LOAD)
 *           SPI <hex>            a byte the firmware shifted out over SPI
 *           STATE <n>            the simulation stopped (crashed or done)
 *   stdin   SET <port><bit> <0|1>    drive an input pin (a button to ground = 0)
 *           PRESS <port><bit> <ms>   hold it low for ms of simulated time
 *           QUIT                     stop
 *
 * simavr's EEPROM starts erased each run, but a real board's boot counter (at
 * EEPROM address 0) survives power cycles; so that a restarted emulator looks
 * like a board that rebooted, it is seeded with BOOT_COUNT, or by default a
 * value from the clock and pid.
 *
 * The firmware sleeps when idle and simavr's raw sleep callback sleeps the
 * same amount of real time, so simulated time follows the wall clock.
 *
 * A pin driven low from here (a button held to ground) stays low until it is let
 * go: simavr sets an input pin to the value the firmware writes into its PORT bit
 * (turning the pull-up on drives it high), which would cut the press short (and
 * lose it) where a real button keeps the input at ground.  So when the firmware's
 * write raises a held pin, the runner pulls it low again at once: the firmware
 * never reads it high (its boot, which turns the pull-ups on, races the first
 * presses of a test whose clock runs ahead of the simulation on a loaded machine).
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "avr_eeprom.h"
#include "avr_ioport.h"
#include "avr_spi.h"
#include "sim_avr.h"
#include "sim_elf.h"
#include "uart_pty.h"

static avr_t *avr;
static uart_pty_t pty;
static uint8_t last_pin[3][8];

/* stdin commands are read in a thread and applied by the simulation thread */
#define QUEUE 32
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static char queue[QUEUE][64];
static int queue_head, queue_tail;
static volatile int queue_pending;
static volatile int quit;

/* A button pressed again before its last press has been held and let go, in simulated
 * time, waits: the simulation may lag the test's clock (a loaded machine), and commands
 * applied in one step would merge two presses of one button into one. */
#define PRESS_GAP_MS 30
static avr_cycle_count_t pin_busy_until[3][8];

/* Pins held low from here (PRESS until its release, SET 0 until SET 1). */
static uint8_t held[3][8];

static avr_irq_t *pin_irq(char port, int bit);

static avr_cycle_count_t hold_pin(struct avr_t *a, avr_cycle_count_t when, void *param) {
    (void)a;
    (void)when;
    int port = (int)((intptr_t)param >> 8), bit = (int)((intptr_t)param & 7);
    if (held[port - 'B'][bit]) avr_raise_irq(pin_irq((char)port, bit), 0);
    return 0;
}

static void pin_changed(struct avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    int port = (int)((intptr_t)param >> 8), bit = (int)((intptr_t)param & 7);
    if (value && held[port - 'B'][bit]) {
        /* the firmware wrote the pin's PORT bit (its pull-up): the button still holds
         * it at ground.  Not raised from inside this notification (simavr skips a
         * hook that is already running); the timer fires at the end of the writing
         * instruction, before the firmware's next one can read the pin. */
        avr_cycle_timer_register(avr, 1, hold_pin, param);
        return;
    }
    uint8_t *last = &last_pin[port - 'B'][bit];
    if (*last == (uint8_t)value) return;
    *last = (uint8_t)value;
    printf("PIN %c%d %u\n", port, bit, value);
    fflush(stdout);
}

static void spi_out(struct avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)param;
    printf("SPI %02X\n", value & 0xFF);
    fflush(stdout);
}

static avr_irq_t *pin_irq(char port, int bit) {
    return avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(port), bit);
}

static avr_cycle_count_t release_pin(struct avr_t *a, avr_cycle_count_t when, void *param) {
    (void)a;
    (void)when;
    int port = (int)((intptr_t)param >> 8), bit = (int)((intptr_t)param & 7);
    held[port - 'B'][bit] = 0;
    avr_raise_irq(pin_irq((char)port, bit), 1);
    return 0;
}

/* Whether a PRESS must wait for its button's previous press to end in simulated time. */
static int waits(const char *command) {
    char port;
    int bit, value;
    return sscanf(command, "PRESS %c%d %d", &port, &bit, &value) == 3 && port >= 'B' &&
           port <= 'D' && bit >= 0 && bit < 8 && avr->cycle < pin_busy_until[port - 'B'][bit];
}

static void apply(const char *command) {
    char port;
    int bit, value;
    if (sscanf(command, "SET %c%d %d", &port, &bit, &value) == 3 && port >= 'B' && port <= 'D' &&
        bit >= 0 && bit < 8) {
        held[port - 'B'][bit] = !value;
        avr_raise_irq(pin_irq(port, bit), value ? 1 : 0);
    } else if (sscanf(command, "PRESS %c%d %d", &port, &bit, &value) == 3 && port >= 'B' &&
               port <= 'D' && bit >= 0 && bit < 8 && value > 0) {
        pin_busy_until[port - 'B'][bit] =
            avr->cycle +
            (avr_cycle_count_t)avr->frequency * (uint32_t)(value + PRESS_GAP_MS) / 1000u;
        held[port - 'B'][bit] = 1;
        avr_raise_irq(pin_irq(port, bit), 0);
        avr_cycle_timer_register_usec(avr, (uint32_t)value * 1000u, release_pin,
                                      (void *)(intptr_t)((port << 8) | bit));
    } else if (!strncmp(command, "QUIT", 4)) {
        quit = 1;
    } else {
        printf("ERROR unknown command: %s\n", command);
        fflush(stdout);
    }
}

static void *read_stdin(void *unused) {
    (void)unused;
    char line[64];
    while (fgets(line, sizeof(line), stdin)) {
        line[strcspn(line, "\r\n")] = 0;
        pthread_mutex_lock(&queue_lock);
        int next = (queue_head + 1) % QUEUE;
        if (next != queue_tail) {
            strcpy(queue[queue_head], line);
            queue_head = next;
            queue_pending = 1;
        }
        pthread_mutex_unlock(&queue_lock);
    }
    quit = 1; /* the test went away: so do we */
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: %s FIRMWARE.elf [BOOT_COUNT]\n", argv[0]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    elf_firmware_t firmware;
    memset(&firmware, 0, sizeof(firmware));
    if (elf_read_firmware(argv[1], &firmware) != 0) {
        fprintf(stderr, "cannot read firmware %s\n", argv[1]);
        return 1;
    }
    if (!firmware.mmcu[0]) strcpy(firmware.mmcu, "atmega328p");
    if (!firmware.frequency) firmware.frequency = 16000000;
    avr = avr_make_mcu_by_name(firmware.mmcu);
    if (!avr) {
        fprintf(stderr, "unknown mcu %s\n", firmware.mmcu);
        return 1;
    }
    avr_init(avr);
    avr_load_firmware(avr, &firmware);

    uint16_t boot = argc == 3 ? (uint16_t)strtoul(argv[2], NULL, 0)
                              : (uint16_t)(time(NULL) * 31u + (unsigned)getpid());
    uint8_t boot_bytes[2] = {(uint8_t)(boot & 0xFF), (uint8_t)(boot >> 8)};
    avr_eeprom_desc_t eeprom = {.ee = boot_bytes, .offset = 0, .size = 2};
    avr_ioctl(avr, AVR_IOCTL_EEPROM_SET, &eeprom);

    memset(last_pin, 0xFF, sizeof(last_pin));
    for (char port = 'B'; port <= 'D'; port++)
        for (int bit = 0; bit < 8; bit++)
            avr_irq_register_notify(pin_irq(port, bit), pin_changed,
                                    (void *)(intptr_t)((port << 8) | bit));
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_SPI_GETIRQ(0), SPI_IRQ_OUTPUT), spi_out,
                            NULL);
    /* buttons are pulled up: released until a test presses them */
    for (int bit = 2; bit < 8; bit++) avr_raise_irq(pin_irq('D', bit), 1);
    avr_raise_irq(pin_irq('C', 5), 1);

    uart_pty_init(avr, &pty);
    uart_pty_connect(&pty, '0');
    printf("READY %s\n", pty.port[0].slavename);
    fflush(stdout);

    pthread_t reader;
    pthread_create(&reader, NULL, read_stdin, NULL);

    int state = cpu_Running;
    while (!quit) {
        state = avr_run(avr);
        if (state == cpu_Done || state == cpu_Crashed) break;
        if (queue_pending) {
            pthread_mutex_lock(&queue_lock);
            while (queue_tail != queue_head && !waits(queue[queue_tail])) {
                apply(queue[queue_tail]);
                queue_tail = (queue_tail + 1) % QUEUE;
            }
            /* a waiting press keeps the queue's order: it and the rest go next steps */
            queue_pending = queue_tail != queue_head;
            pthread_mutex_unlock(&queue_lock);
        }
    }
    if (!quit) {
        printf("STATE %d\n", state);
        fflush(stdout);
    }
    uart_pty_stop(&pty);
    return state == cpu_Crashed ? 1 : 0;
}
