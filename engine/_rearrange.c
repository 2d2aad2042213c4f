/*
 * Exact dynamic programme for Rummikub-style tables that may be rearranged.
 *
 * The idea is van Rijn, Takes and Vis's: walk the numbers 1..13 in order and
 * remember, per colour, how long each run that is still open has become.
 * Here each number is split into one step per colour (how many tiles of that
 * colour go to runs, how many to sets, which open runs they extend) and a
 * last step that checks the sets of that number can be formed, with jokers.
 * Table tiles must all be used, rack tiles may be; the score is what the
 * caller weights them (1 each for "most tiles", face value for "most
 * points").  An optional value threshold (the initial meld) is carried in
 * the state, capped at the threshold.
 *
 * Runs per colour: `slots` open runs at once (copies, plus one when jokers
 * are in play).  A slot is a small code: 0 empty, else length (capped) and,
 * in "reference" mode, whether the run started and whether it ends with a
 * joker, so runs of 4 or 5 with a joker at an end can be refused (the melds
 * rummikub-solver leaves out as "redundant jokers").
 *
 * The programme keeps every reachable state of each step with its best
 * score and a back pointer, and returns the decisions of the best final
 * state; the Python side replays them into melds.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define COLOURS 4
#define NUMBERS 13
#define MAX_SLOTS 3
#define SLOT_BITS 5
#define NEG_INF (-1000000000)

typedef struct {
    uint64_t runs;   /* 4 colours x MAX_SLOTS x SLOT_BITS, slots sorted descending */
    uint32_t extra;  /* jokers used (table-labelled, rack-labelled), set counts, value */
} Key;

typedef struct {
    Key key;
    int32_t score;
    int32_t parent;
    uint32_t decision;
} Entry;

typedef struct {
    Entry *entries;
    int32_t count, capacity;
    int32_t *table;  /* open addressing over entries */
    int32_t table_size;
} Layer;

typedef struct {
    uint16_t next;    /* the colour's slot codes afterwards, packed and sorted */
    uint8_t naturals; /* natural tiles this colour gives to runs */
    uint8_t jokers;   /* jokers this colour's runs take */
    uint8_t combo;    /* slot actions, for the replay */
    uint8_t need_next;  /* open runs that must grow at the next number, */
    uint8_t need_after; /* and at the one after (growing by naturals, the least they need) */
} Transition;

typedef struct {
    int count;
    Transition items[64];
} Transitions;

#define TRIPLE_SPACE 32768
#define TRANSITION_TABLES (MAX_SLOTS * 2 * 8)

typedef struct {
    int tiles_table[COLOURS][NUMBERS + 1];
    int tiles_rack[COLOURS][NUMBERS + 1];
    int weight_tile[COLOURS][NUMBERS + 1];
    int weight_joker[NUMBERS + 1];
    int value[NUMBERS + 1];
    int jokers_table, jokers_rack;
    int slots, copies;
    int reference_mode;
    int threshold;
    int pooled_jokers; /* uniform joker weight: count jokers, score them at the end */
    int incumbent;     /* a score known to be reachable: states that cannot beat it are dropped */
    int potential[NUMBERS * (COLOURS + 1) + 2]; /* most that rack tiles after each step can add */
    int joker_best[NUMBERS * (COLOURS + 1) + 2]; /* best joker weight from each step's number on */
    /* set_ok[n1][n2][jokers]: n1 colours give one tile, n2 give two; can sets be made */
    unsigned char set_ok[5][5][8];
    int beam; /* > 0: keep only this many best states per step (a quick lower bound) */
    Transitions **transitions; /* per packed slot triple, filled on first use */
} Problem;

/* --- slot codes ---------------------------------------------------------- */
/* code = 1 + (len-1)*4 + started_joker*2 + ends_joker; len 1..6 (6 = 6+) */
static Transitions **transition_tables[TRANSITION_TABLES];

/* The most a state can still add from `step` on, when `jr_used` rack jokers are placed: the
   rack tiles of the steps ahead, and each rack joker left at the best weight still ahead (a
   joker placed early is worth what it stands for, not the best weight, so counting jokers
   left rather than all of them keeps the bound tight for the value objective). */
static int32_t bound_after(const Problem *p, int step, unsigned jr_used) {
    int32_t bound = p->potential[step];
    if (p->pooled_jokers) return bound + p->jokers_rack * p->weight_joker[1];
    return bound + (p->jokers_rack - (int)jr_used) * p->joker_best[step];
}
static int code_len(int code) { return code ? (code - 1) / 4 + 1 : 0; }
static int code_start(int code) { return code ? ((code - 1) >> 1) & 1 : 0; }
static int code_end(int code) { return code ? (code - 1) & 1 : 0; }
/* Codes that no future can tell apart are one code, so the states they are in are one state:
   whether a run ends with a joker matters only at four, and only where it did not start with
   one; a run of five may close at once or not, and becomes six either way; a run of six may
   always close.  rearrange.py's _code mirrors this. */
static int make_code(const Problem *p, int len, int start_joker, int end_joker) {
    int cap = p->reference_mode ? 6 : 3;
    if (!p->reference_mode) start_joker = end_joker = 0;
    if (len > cap) len = cap;
    if (len <= 3 || (len == 4 && start_joker)) end_joker = 0;
    if (len == 5) {
        if (start_joker || end_joker) start_joker = 1, end_joker = 0; /* grows to six first */
        else len = 6; /* closes, or grows to six */
    }
    if (len == 6) start_joker = end_joker = 0;
    return 1 + (len - 1) * 4 + start_joker * 2 + end_joker;
}
static int closable(const Problem *p, int code) {
    int len = code_len(code);
    if (code == 0) return 1;
    if (len < 3) return 0;
    if (p->reference_mode && (len == 4 || len == 5) && (code_start(code) || code_end(code)))
        return 0;
    return 1;
}

static int get_slot(uint64_t runs, int colour, int slot) {
    int shift = (colour * MAX_SLOTS + slot) * SLOT_BITS;
    return (int)((runs >> shift) & 31u);
}

/* extra: bits 0-2 jokers table-labelled, 3-5 rack-labelled, 6-8 n1, 9-11 n2, 12-19 value */
#define X_JT(x) ((x) & 7u)
#define X_JR(x) (((x) >> 3) & 7u)
#define X_N1(x) (((x) >> 6) & 7u)
#define X_N2(x) (((x) >> 9) & 7u)
#define X_VAL(x) (((x) >> 12) & 255u)
static uint32_t make_extra(unsigned jt, unsigned jr, unsigned n1, unsigned n2, unsigned val) {
    return jt | (jr << 3) | (n1 << 6) | (n2 << 9) | (val << 12);
}

/* --- layers --------------------------------------------------------------- */
static uint64_t hash_key(Key k) {
    uint64_t h = k.runs * 0x9E3779B97F4A7C15ull ^ ((uint64_t)k.extra * 0xC2B2AE3D27D4EB4Full);
    h ^= h >> 29;
    return h;
}

static int layer_init(Layer *layer, int32_t capacity) {
    layer->count = 0;
    layer->capacity = capacity;
    layer->entries = malloc(sizeof(Entry) * (size_t)capacity);
    layer->table_size = 1;
    while (layer->table_size < capacity * 2) layer->table_size <<= 1;
    layer->table = malloc(sizeof(int32_t) * (size_t)layer->table_size);
    if (!layer->entries || !layer->table) return -1;
    memset(layer->table, 0xff, sizeof(int32_t) * (size_t)layer->table_size);
    return 0;
}

static void layer_free(Layer *layer) {
    free(layer->entries);
    free(layer->table);
}

/* Rebuild the index after entries moved. */
static void layer_rehash(Layer *layer) {
    memset(layer->table, 0xff, sizeof(int32_t) * (size_t)layer->table_size);
    uint64_t mask = (uint64_t)layer->table_size - 1;
    for (int32_t i = 0; i < layer->count; i++) {
        uint64_t h = hash_key(layer->entries[i].key) & mask;
        while (layer->table[h] >= 0) h = (h + 1) & mask;
        layer->table[h] = i;
    }
}

static int layer_grow(Layer *layer) {
    int32_t new_capacity = layer->capacity * 2;
    Entry *entries = realloc(layer->entries, sizeof(Entry) * (size_t)new_capacity);
    if (!entries) return -1;
    layer->entries = entries;
    layer->capacity = new_capacity;
    free(layer->table);
    layer->table_size = 1;
    while (layer->table_size < new_capacity * 2) layer->table_size <<= 1;
    layer->table = malloc(sizeof(int32_t) * (size_t)layer->table_size);
    if (!layer->table) return -1;
    layer_rehash(layer);
    return 0;
}

static uint16_t pack_codes(const int codes[MAX_SLOTS]);

/* The beam ranks states by score, and first of all by how many of the table's jokers they
   have placed: those must all be placed, and a beam of states that put them off finds no
   answer at all. */
static _Thread_local int beam_jokers_table; /* the searches run without the GIL, in parallel */
static int beam_rank(const Entry *e) {
    int placed = (int)X_JT(e->key.extra) + (int)X_JR(e->key.extra);
    if (placed > beam_jokers_table) placed = beam_jokers_table;
    return placed * 100000 + e->score;
}

static int by_rank_desc(const void *a, const void *b) {
    int x = beam_rank((const Entry *)a), y = beam_rank((const Entry *)b);
    return (x < y) - (x > y);
}

/* Keep the best `keep` states (beam search); parents stay valid as entries are copied. */
static void layer_truncate(Layer *layer, int32_t keep) {
    if (layer->count <= keep) return;
    qsort(layer->entries, (size_t)layer->count, sizeof(Entry), by_rank_desc);
    layer->count = keep;
    layer_rehash(layer);
}

static int32_t layer_find(const Layer *layer, Key key) {
    uint64_t mask = (uint64_t)layer->table_size - 1;
    uint64_t h = hash_key(key) & mask;
    while (layer->table[h] >= 0) {
        const Entry *e = &layer->entries[layer->table[h]];
        if (e->key.runs == key.runs && e->key.extra == key.extra) return layer->table[h];
        h = (h + 1) & mask;
    }
    return -1;
}

/* Drop states another state of the layer dominates: one whose open runs are at least as far
   along (a closable run can do all an empty slot can, a run of two all a run of one) with at
   least the score.  Only in the plain mode, where codes are 0, len 1, 2, 3+. */
static void layer_prune_dominated(Layer *layer, const Problem *p) {
    if (p->reference_mode || layer->count < 64) return;
    int code1 = 1, code2 = 5, code3 = 9;
    char *dead = calloc((size_t)layer->count, 1);
    if (!dead) return;
    for (int32_t i = 0; i < layer->count; i++) {
        const Entry *e = &layer->entries[i];
        for (int colour = 0; colour < COLOURS && !dead[i]; colour++) {
            int shift = colour * MAX_SLOTS * SLOT_BITS;
            int codes[MAX_SLOTS];
            for (int s = 0; s < MAX_SLOTS; s++) codes[s] = (e->key.runs >> (shift + s * SLOT_BITS)) & 31;
            for (int s = 0; s < p->slots && !dead[i]; s++) {
                int upgrade = codes[s] == 0 || codes[s] == code2 ? code3 : codes[s] == code1 ? code2 : -1;
                if (upgrade < 0) continue;
                int better[MAX_SLOTS];
                memcpy(better, codes, sizeof(better));
                better[s] = upgrade;
                Key key = {(e->key.runs & ~((uint64_t)0x7fff << shift))
                               | ((uint64_t)pack_codes(better) << shift),
                           e->key.extra};
                int32_t j = layer_find(layer, key);
                if (j >= 0 && !dead[j] && layer->entries[j].score >= e->score) dead[i] = 1;
            }
        }
    }
    /* compact, keeping parents (entries of the previous layer) untouched */
    int32_t kept = 0;
    for (int32_t i = 0; i < layer->count; i++)
        if (!dead[i]) layer->entries[kept++] = layer->entries[i];
    layer->count = kept;
    layer_rehash(layer);
    free(dead);
}

static int layer_offer(Layer *layer, Key key, int32_t score, int32_t parent, uint32_t decision) {
    uint64_t mask = (uint64_t)layer->table_size - 1;
    uint64_t h = hash_key(key) & mask;
    while (layer->table[h] >= 0) {
        Entry *e = &layer->entries[layer->table[h]];
        if (e->key.runs == key.runs && e->key.extra == key.extra) {
            if (score > e->score) {
                e->score = score;
                e->parent = parent;
                e->decision = decision;
            }
            return 0;
        }
        h = (h + 1) & mask;
    }
    if (layer->count >= layer->capacity) {
        if (layer_grow(layer) < 0) return -1;
        return layer_offer(layer, key, score, parent, decision);
    }
    int32_t index = layer->count++;
    layer->entries[index] = (Entry){key, score, parent, decision};
    layer->table[h] = index;
    return 0;
}

/* --- the steps --------------------------------------------------------------- */
/* Slot actions: 0 keep (empty stays empty), 1 close, 2 add natural, 3 add joker. */
static uint16_t pack_codes(const int codes[MAX_SLOTS]) {
    int a[MAX_SLOTS];
    memcpy(a, codes, sizeof(a));
    for (int i = 0; i < MAX_SLOTS; i++)
        for (int j = i + 1; j < MAX_SLOTS; j++)
            if (a[j] > a[i]) { int t = a[i]; a[i] = a[j]; a[j] = t; }
    return (uint16_t)(a[0] | (a[1] << SLOT_BITS) | (a[2] << (2 * SLOT_BITS)));
}

/* Every way the open runs of one colour can go on at the next number: each slot closes,
   grows by a natural or a joker, or (empty) starts a run or stays empty. */
static const Transitions *transitions_of(const Problem *p, uint16_t packed) {
    Transitions *known = __atomic_load_n(&p->transitions[packed], __ATOMIC_ACQUIRE);
    if (known) return known;
    Transitions *list = calloc(1, sizeof(Transitions));
    if (!list) return NULL;
    int codes[MAX_SLOTS];
    for (int s = 0; s < MAX_SLOTS; s++) codes[s] = (packed >> (s * SLOT_BITS)) & 31;
    int combos = 1;
    for (int s = 0; s < p->slots; s++) combos *= 4;
    for (int combo = 0; combo < combos; combo++) {
        int naturals = 0, jokers = 0, ok = 1;
        int next[MAX_SLOTS] = {0, 0, 0};
        int c = combo;
        for (int s = 0; s < p->slots && ok; s++, c >>= 2) {
            int action = c & 3, code = codes[s];
            if (code == 0) {
                if (action == 1) ok = 0;
                else if (action == 2) { next[s] = make_code(p, 1, 0, 0); naturals++; }
                else if (action == 3) { next[s] = make_code(p, 1, 1, 1); jokers++; }
            } else {
                int len = code_len(code);
                if (action == 0) ok = 0; /* an open run must close or grow */
                else if (action == 1) { if (!closable(p, code)) ok = 0; }
                else if (action == 2) { next[s] = make_code(p, len + 1, code_start(code), 0); naturals++; }
                else { next[s] = make_code(p, len + 1, code_start(code), 1); jokers++; }
            }
        }
        if (!ok || jokers > p->jokers_table + p->jokers_rack) continue;
        uint16_t packed_next = pack_codes(next);
        /* two combos giving the same result are the same move */
        int duplicate = 0;
        for (int k = 0; k < list->count; k++)
            if (list->items[k].next == packed_next && list->items[k].naturals == naturals
                && list->items[k].jokers == jokers) duplicate = 1;
        if (duplicate) continue;
        int need_next = 0, need_after = 0;
        for (int s = 0; s < p->slots; s++) {
            if (!next[s] || closable(p, next[s])) continue;
            need_next++;
            if (!closable(p, make_code(p, code_len(next[s]) + 1, code_start(next[s]), 0)))
                need_after++;
        }
        list->items[list->count++] = (Transition){packed_next, (uint8_t)naturals, (uint8_t)jokers,
                                                  (uint8_t)combo, (uint8_t)need_next,
                                                  (uint8_t)need_after};
    }
    /* searches run in parallel without the GIL: the first to fill a triple's list keeps it */
    Transitions *expected = NULL;
    if (!__atomic_compare_exchange_n(&p->transitions[packed], &expected, list, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        free(list);
        return expected;
    }
    return list;
}

/* Tiles of a colour and number in play (none past 13). */
static int tiles_at(const Problem *p, int colour, int number) {
    return number <= NUMBERS ? p->tiles_table[colour][number] + p->tiles_rack[colour][number] : 0;
}

/* The jokers a move's open runs will need at least: each run that cannot close yet must grow
   at the next number, or the next two, and the tiles of its colour there (`ahead`, `beyond`)
   may be too few.  A move needing more jokers than are left leads nowhere: dropping it at
   once spares the search the other colours' branching before the run's own step fails. */
static int unfed(const Transition *move, int ahead, int beyond) {
    int short_next = move->need_next > ahead ? move->need_next - ahead : 0;
    int short_after = move->need_after > beyond ? move->need_after - beyond : 0;
    return short_next + short_after;
}

static int colour_step(const Problem *p, const Layer *from, Layer *to, int number, int colour,
                       int step_index) {
    int t = p->tiles_table[colour][number];
    int r = p->tiles_rack[colour][number];
    int shift = colour * MAX_SLOTS * SLOT_BITS;
    int ahead = tiles_at(p, colour, number + 1), beyond = tiles_at(p, colour, number + 2);
    for (int32_t i = 0; i < from->count; i++) {
        const Entry *e = &from->entries[i];
        uint16_t packed = (uint16_t)((e->key.runs >> shift) & 0x7fff);
        const Transitions *moves = transitions_of(p, packed);
        if (!moves) return -1;
        unsigned jt = X_JT(e->key.extra), jr = X_JR(e->key.extra);
        unsigned n1 = X_N1(e->key.extra), n2 = X_N2(e->key.extra), val = X_VAL(e->key.extra);
        int jokers_left_t = p->jokers_table - (int)jt;
        int jokers_left_r = p->jokers_rack - (int)jr;
        for (int m = 0; m < moves->count; m++) {
            const Transition *move = &moves->items[m];
            int naturals = move->naturals, jokers = move->jokers, combo = move->combo;
            if (jokers > jokers_left_t + jokers_left_r) continue;
            if (unfed(move, ahead, beyond) > jokers_left_t + jokers_left_r - jokers) continue;
            /* naturals to sets */
            int low = t - naturals; if (low < 0) low = 0;
            int high = t + r - naturals; if (high > p->copies) high = p->copies;
            if (naturals > t + r) continue;
            for (int to_sets = low; to_sets <= high; to_sets++) {
                int used = naturals + to_sets;
                int from_rack = used - t;
                unsigned nn1 = n1 + (to_sets == 1), nn2 = n2 + (to_sets == 2);
                /* joker labels: try every split, unless jokers are pooled */
                for (int jk_r = 0; jk_r <= jokers; jk_r++) {
                    int jk_t = jokers - jk_r;
                    if (p->pooled_jokers) {
                        if (jk_r) break;
                        if (jokers > jokers_left_t + jokers_left_r) continue;
                    } else if (jk_t > jokers_left_t || jk_r > jokers_left_r) continue;
                    int32_t score = e->score + from_rack * p->weight_tile[colour][number]
                                    + jk_r * p->weight_joker[number];
                    unsigned nval = val;
                    if (p->threshold > 0) {
                        nval = val + (unsigned)((used + jokers) * p->value[number]);
                        if (nval > (unsigned)p->threshold) nval = (unsigned)p->threshold;
                    }
                    if (score + bound_after(p, step_index + 1, jr + (unsigned)jk_r) < p->incumbent) continue;
                    Key key;
                    key.runs = (e->key.runs & ~((uint64_t)0x7fff << shift))
                               | ((uint64_t)move->next << shift);
                    key.extra = make_extra(jt + (unsigned)jk_t, jr + (unsigned)jk_r, nn1, nn2, nval);
                    uint32_t decision = (uint32_t)combo | ((uint32_t)to_sets << 8)
                                        | ((uint32_t)jk_r << 12);
                    if (layer_offer(to, key, score, i, decision) < 0) return -1;
                }
            }
        }
    }
    return 0;
}

static int set_step(const Problem *p, const Layer *from, Layer *to, int number, int step_index) {
    for (int32_t i = 0; i < from->count; i++) {
        const Entry *e = &from->entries[i];
        unsigned jt = X_JT(e->key.extra), jr = X_JR(e->key.extra);
        unsigned n1 = X_N1(e->key.extra), n2 = X_N2(e->key.extra), val = X_VAL(e->key.extra);
        int left_t = p->jokers_table - (int)jt, left_r = p->jokers_rack - (int)jr;
        if (p->pooled_jokers) { left_t += left_r; left_r = 0; }
        for (int jk_t = 0; jk_t <= left_t; jk_t++) {
            for (int jk_r = 0; jk_r <= left_r; jk_r++) {
                int jokers = jk_t + jk_r;
                if (jokers > 7 || !p->set_ok[n1][n2][jokers]) continue;
                int32_t score = e->score + jk_r * p->weight_joker[number];
                unsigned nval = val;
                if (p->threshold > 0) {
                    nval = val + (unsigned)(jokers * p->value[number]);
                    if (nval > (unsigned)p->threshold) nval = (unsigned)p->threshold;
                }
                if (score + bound_after(p, step_index + 1, jr + (unsigned)jk_r) < p->incumbent) continue;
                Key key = {e->key.runs, make_extra(jt + (unsigned)jk_t, jr + (unsigned)jk_r, 0, 0, nval)};
                uint32_t decision = (uint32_t)jk_t | ((uint32_t)jk_r << 4);
                if (layer_offer(to, key, score, i, decision) < 0) return -1;
            }
        }
    }
    return 0;
}

/* --- depth-first search with a target -----------------------------------------
 * The same steps, walked depth first: greedy moves first, a memo of states that
 * already failed (with the score they were reached with), and every state that
 * cannot reach the target even by placing all rack tiles ahead dropped.  A target
 * that can be reached is usually reached on the first dive, without enumerating
 * the breadth of a dense table; one that cannot is refuted by the memo.  A probe
 * gives up (answers "budget") after the states it may expand, or once the
 * monotonic clock passes its seconds (read every 1024 states). */
#define STEPS (NUMBERS * (COLOURS + 1))
#define MAX_SUCCESSORS 640

typedef struct {
    Key key;
    int32_t score;
    uint32_t decision;
} Successor;

typedef struct {
    const Problem *p;
    int32_t target;
    Layer memo[STEPS + 1];
    Successor *buffers;
    uint32_t decisions[STEPS];
    int32_t found;
    int failed;
    long expansions, budget; /* budget > 0: give up after that many expanded states */
    double deadline;         /* > 0: give up when the monotonic clock passes it (seconds) */
    int exhausted;
} Search;

static int32_t final_score(const Problem *p, Key key, int32_t score) {
    int used = (int)X_JT(key.extra) + (int)X_JR(key.extra);
    int ok = p->pooled_jokers ? used >= p->jokers_table : (int)X_JT(key.extra) == p->jokers_table;
    if (p->pooled_jokers && used > p->jokers_table)
        score += (used - p->jokers_table) * p->weight_joker[1];
    for (int c = 0; c < COLOURS && ok; c++)
        for (int s = 0; s < p->slots && ok; s++)
            if (!closable(p, get_slot(key.runs, c, s))) ok = 0;
    if (ok && p->threshold > 0 && (int)X_VAL(key.extra) < p->threshold) ok = 0;
    return ok ? score : NEG_INF;
}

static int expand(const Problem *p, int step, Key key, int32_t score, int32_t target,
                  Successor *out) {
    int number = step / (COLOURS + 1) + 1, colour = step % (COLOURS + 1);
    unsigned jt = X_JT(key.extra), jr = X_JR(key.extra);
    unsigned n1 = X_N1(key.extra), n2 = X_N2(key.extra), val = X_VAL(key.extra);
    int left_t = p->jokers_table - (int)jt, left_r = p->jokers_rack - (int)jr;
    int count = 0;
    if (colour == COLOURS) {
        if (p->pooled_jokers) { left_t += left_r; left_r = 0; }
        for (int jk_t = 0; jk_t <= left_t; jk_t++)
            for (int jk_r = 0; jk_r <= left_r; jk_r++) {
                int jokers = jk_t + jk_r;
                if (jokers > 7 || !p->set_ok[n1][n2][jokers]) continue;
                int32_t next_score = score + jk_r * p->weight_joker[number];
                if (next_score + bound_after(p, step + 1, jr + (unsigned)jk_r) < target) continue;
                unsigned nval = val;
                if (p->threshold > 0) {
                    nval = val + (unsigned)(jokers * p->value[number]);
                    if (nval > (unsigned)p->threshold) nval = (unsigned)p->threshold;
                }
                Key next = {key.runs, make_extra(jt + (unsigned)jk_t, jr + (unsigned)jk_r, 0, 0, nval)};
                out[count++] = (Successor){next, next_score, (uint32_t)jk_t | ((uint32_t)jk_r << 4)};
            }
        return count;
    }
    int t = p->tiles_table[colour][number], r = p->tiles_rack[colour][number];
    int shift = colour * MAX_SLOTS * SLOT_BITS;
    const Transitions *moves = transitions_of(p, (uint16_t)((key.runs >> shift) & 0x7fff));
    if (!moves) return -1;
    int ahead = tiles_at(p, colour, number + 1), beyond = tiles_at(p, colour, number + 2);
    for (int m = 0; m < moves->count; m++) {
        const Transition *move = &moves->items[m];
        int naturals = move->naturals, jokers = move->jokers;
        if (jokers > left_t + left_r || naturals > t + r) continue;
        if (unfed(move, ahead, beyond) > left_t + left_r - jokers) continue;
        int low = t - naturals > 0 ? t - naturals : 0;
        int high = t + r - naturals < p->copies ? t + r - naturals : p->copies;
        for (int to_sets = low; to_sets <= high; to_sets++) {
            int used = naturals + to_sets, from_rack = used - t;
            for (int jk_r = 0; jk_r <= jokers; jk_r++) {
                int jk_t = jokers - jk_r;
                if (p->pooled_jokers) {
                    if (jk_r) break;
                } else if (jk_t > left_t || jk_r > left_r) continue;
                int32_t next_score = score + from_rack * p->weight_tile[colour][number]
                                     + jk_r * p->weight_joker[number];
                if (next_score + bound_after(p, step + 1, jr + (unsigned)jk_r) < target) continue;
                unsigned nval = val;
                if (p->threshold > 0) {
                    nval = val + (unsigned)((used + jokers) * p->value[number]);
                    if (nval > (unsigned)p->threshold) nval = (unsigned)p->threshold;
                }
                Key next;
                next.runs = (key.runs & ~((uint64_t)0x7fff << shift)) | ((uint64_t)move->next << shift);
                next.extra = make_extra(jt + (unsigned)jk_t, jr + (unsigned)jk_r,
                                        n1 + (to_sets == 1), n2 + (to_sets == 2), nval);
                if (count >= MAX_SUCCESSORS) return -1;
                out[count++] = (Successor){next, next_score,
                                           (uint32_t)move->combo | ((uint32_t)to_sets << 8)
                                               | ((uint32_t)jk_r << 12)};
            }
        }
    }
    return count;
}

static double monotonic_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

static int dfs(Search *search, int step, Key key, int32_t score) {
    const Problem *p = search->p;
    if (step == STEPS) {
        int32_t final = final_score(p, key, score);
        if (final >= search->target && final > NEG_INF) { search->found = final; return 1; }
        return 0;
    }
    Layer *memo = &search->memo[step];
    int32_t seen = layer_find(memo, key);
    if (seen >= 0 && memo->entries[seen].score >= score) return 0;
    ++search->expansions;
    if ((search->budget > 0 && search->expansions > search->budget)
        || (search->deadline > 0 && (search->expansions & 1023) == 0
            && monotonic_seconds() >= search->deadline)) {
        search->exhausted = 1;
        return 0;
    }
    Successor *buffer = search->buffers + (size_t)step * MAX_SUCCESSORS;
    int count = expand(p, step, key, score, search->target, buffer);
    if (count < 0) { search->failed = 1; return 0; }
    /* greedy first: most placed so far */
    for (int i = 1; i < count; i++) {
        Successor item = buffer[i];
        int j = i - 1;
        while (j >= 0 && buffer[j].score < item.score) { buffer[j + 1] = buffer[j]; j--; }
        buffer[j + 1] = item;
    }
    for (int i = 0; i < count && !search->failed && !search->exhausted; i++) {
        if (dfs(search, step + 1, buffer[i].key, buffer[i].score)) {
            search->decisions[step] = buffer[i].decision;
            return 1;
        }
    }
    if (search->exhausted) return 0; /* an unfinished look proves nothing */
    if (layer_offer(memo, key, score, -1, 0) < 0) search->failed = 1;
    return 0;
}

static int read_grid(PyObject *seq, int grid[COLOURS][NUMBERS + 1]) {
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of 52 ints");
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != COLOURS * NUMBERS) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "expected 52 ints (colour-major)");
        return -1;
    }
    for (int c = 0; c < COLOURS; c++)
        for (int n = 1; n <= NUMBERS; n++) {
            long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, c * NUMBERS + n - 1));
            if (v == -1 && PyErr_Occurred()) { Py_DECREF(fast); return -1; }
            grid[c][n] = (int)v;
        }
    Py_DECREF(fast);
    return 0;
}

static int read_row(PyObject *seq, int row[NUMBERS + 1]) {
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of 13 ints");
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != NUMBERS) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "expected 13 ints");
        return -1;
    }
    row[0] = 0;
    for (int n = 1; n <= NUMBERS; n++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, n - 1));
        if (v == -1 && PyErr_Occurred()) { Py_DECREF(fast); return -1; }
        row[n] = (int)v;
    }
    Py_DECREF(fast);
    return 0;
}

/* States the calling thread's last depth-first search expanded (expansions()). */
static _Thread_local long last_expansions;

static PyObject *expansions_impl(PyObject *self, PyObject *unused) {
    return PyLong_FromLong(last_expansions);
}

static PyObject *solve_impl(PyObject *self, PyObject *args) {
    PyObject *table, *rack, *weight_tile, *weight_joker, *value;
    const char *set_ok_bytes;
    Py_ssize_t set_ok_len;
    Problem p;
    memset(&p, 0, sizeof(p));
    p.incumbent = NEG_INF;
    long budget = 0;
    double seconds = 0.0;
    if (!PyArg_ParseTuple(args, "OOOOOiiiiiy#|iild", &table, &rack, &weight_tile, &weight_joker,
                          &value, &p.jokers_table, &p.jokers_rack, &p.copies,
                          &p.reference_mode, &p.threshold, &set_ok_bytes, &set_ok_len,
                          &p.incumbent, &p.beam, &budget, &seconds))
        return NULL;
    if (set_ok_len != 5 * 5 * 8) {
        PyErr_SetString(PyExc_ValueError, "set_ok must be 200 bytes");
        return NULL;
    }
    memcpy(p.set_ok, set_ok_bytes, 200);
    p.reference_mode = p.reference_mode ? 1 : 0;
    if (read_grid(table, p.tiles_table) < 0 || read_grid(rack, p.tiles_rack) < 0
        || read_grid(weight_tile, p.weight_tile) < 0 || read_row(weight_joker, p.weight_joker) < 0
        || read_row(value, p.value) < 0)
        return NULL;
    if (p.copies < 1 || p.copies > 2 || p.jokers_table < 0 || p.jokers_rack < 0
        || p.jokers_table + p.jokers_rack > 7 || p.threshold < 0 || p.threshold > 255) {
        PyErr_SetString(PyExc_ValueError, "copies 1..2, jokers 0..7, threshold 0..255");
        return NULL;
    }
    {
        /* potential[k]: the most that the rack tiles of steps k.. can still add; joker_best[k]:
           the best weight a rack joker can still take from step k on (bound_after) */
        int total = NUMBERS * (COLOURS + 1);
        p.potential[total] = p.potential[total + 1] = 0;
        p.joker_best[total] = p.joker_best[total + 1] = 0;
        for (int k = total - 1; k >= 0; k--) {
            int number = k / (COLOURS + 1) + 1, colour = k % (COLOURS + 1);
            int add = colour < COLOURS ? p.tiles_rack[colour][number] * p.weight_tile[colour][number] : 0;
            p.potential[k] = p.potential[k + 1] + add;
            int weight = p.weight_joker[number];
            p.joker_best[k] = p.joker_best[k + 1] > weight ? p.joker_best[k + 1] : weight;
        }
    }
    p.pooled_jokers = 1;
    for (int n = 2; n <= NUMBERS; n++)
        if (p.weight_joker[n] != p.weight_joker[1]) p.pooled_jokers = 0;
    if (p.threshold > 0) p.pooled_jokers = 0;
    p.slots = p.copies + (p.jokers_table + p.jokers_rack > 0 ? 1 : 0);
    if (p.slots > MAX_SLOTS) p.slots = MAX_SLOTS;

    beam_jokers_table = p.jokers_table;
    /* Transitions depend only on the slot count, the mode and the jokers in play, so they
       are kept for the life of the process, one table per such triple, filled on first use.
       A triple's table is made here, under the GIL; its lists are filled by the searches,
       which run without it (transitions_of). */
    {
        int total = p.jokers_table + p.jokers_rack;
        int index = ((p.slots - 1) * 2 + (p.reference_mode ? 1 : 0)) * 8 + (total > 7 ? 7 : total);
        if (!transition_tables[index]) {
            transition_tables[index] = calloc(TRIPLE_SPACE, sizeof(Transitions *));
            if (!transition_tables[index]) return PyErr_NoMemory();
        }
        p.transitions = transition_tables[index];
    }
    if (p.beam < 0) {
        Search *search = calloc(1, sizeof(Search));
        PyObject *result = NULL;
        if (search) search->buffers = malloc(sizeof(Successor) * (size_t)STEPS * MAX_SUCCESSORS);
        int ok = search && search->buffers;
        for (int s = 0; ok && s <= STEPS; s++)
            if (layer_init(&search->memo[s], 64) < 0) ok = 0;
        if (ok) {
            search->p = &p;
            search->target = p.incumbent;
            search->budget = budget;
            search->deadline = seconds > 0 ? monotonic_seconds() + seconds : 0.0;
            search->found = NEG_INF;
            Key start = {0, make_extra(0, 0, 0, 0, 0)};
            int found;
            /* the search touches no Python object: other threads (the panel's server, a
               second hint) run meanwhile */
            Py_BEGIN_ALLOW_THREADS
            found = dfs(search, 0, start, 0);
            Py_END_ALLOW_THREADS
            last_expansions = search->expansions;
            if (search->failed) {
                PyErr_NoMemory();
            } else if (search->exhausted) {
                result = PyUnicode_FromString("budget");
            } else if (!found) {
                result = Py_NewRef(Py_None);
            } else {
                PyObject *decisions = PyList_New(STEPS);
                for (int s = 0; decisions && s < STEPS; s++)
                    PyList_SET_ITEM(decisions, s, PyLong_FromUnsignedLong(search->decisions[s]));
                result = decisions ? Py_BuildValue("(iN)", search->found, decisions) : NULL;
            }
        } else {
            PyErr_NoMemory();
        }
        if (search) {
            for (int s = 0; s <= STEPS; s++)
                if (search->memo[s].entries) layer_free(&search->memo[s]);
            free(search->buffers);
            free(search);
        }
        return result;
    }
    int steps = NUMBERS * (COLOURS + 1);
    Layer *layers = calloc((size_t)steps + 1, sizeof(Layer));
    if (!layers) return PyErr_NoMemory();
    int failed = 0;
    if (layer_init(&layers[0], 16) < 0) failed = 1;
    Key start = {0, make_extra(0, 0, 0, 0, 0)};
    if (!failed) layer_offer(&layers[0], start, 0, -1, 0);
    int step = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int number = 1; number <= NUMBERS && !failed; number++) {
        for (int colour = 0; colour < COLOURS && !failed; colour++) {
            Layer *to = &layers[step + 1];
            if (layer_init(to, layers[step].count * 4 + 16) < 0
                || colour_step(&p, &layers[step], to, number, colour, step) < 0)
                failed = 1;
            else if (p.beam > 0) layer_truncate(to, p.beam);
            else layer_prune_dominated(to, &p);
            step++;
        }
        if (failed) break;
        Layer *to = &layers[step + 1];
        if (layer_init(to, layers[step].count + 16) < 0
            || set_step(&p, &layers[step], to, number, step) < 0)
            failed = 1;
        else if (p.beam > 0) layer_truncate(to, p.beam);
        step++;
    }
    Py_END_ALLOW_THREADS
    PyObject *result = NULL;
    if (failed) {
        PyErr_NoMemory();
    } else {
        /* the best final state: every run closed, every table joker placed */
        Layer *last = &layers[step];
        int32_t best = -1, best_score = NEG_INF;
        for (int32_t i = 0; i < last->count; i++) {
            const Entry *e = &last->entries[i];
            int used = (int)X_JT(e->key.extra) + (int)X_JR(e->key.extra);
            int ok = p.pooled_jokers ? used >= p.jokers_table : (int)X_JT(e->key.extra) == p.jokers_table;
            int32_t score = e->score;
            if (p.pooled_jokers && used > p.jokers_table)
                score += (used - p.jokers_table) * p.weight_joker[1];
            for (int c = 0; c < COLOURS && ok; c++)
                for (int s = 0; s < p.slots && ok; s++)
                    if (!closable(&p, get_slot(e->key.runs, c, s))) ok = 0;
            if (ok && p.threshold > 0 && (int)X_VAL(e->key.extra) < p.threshold) ok = 0;
            if (ok && (best < 0 || score > best_score)) { best = i; best_score = score; }
        }
        if (best < 0) {
            result = Py_NewRef(Py_None);
        } else {
            PyObject *decisions = PyList_New(step);
            int32_t index = best;
            for (int s = step; s > 0 && decisions; s--) {
                const Entry *e = &layers[s].entries[index];
                PyList_SET_ITEM(decisions, s - 1, PyLong_FromUnsignedLong(e->decision));
                index = e->parent;
            }
            int32_t final_score = best_score;
            result = decisions ? Py_BuildValue("(iN)", final_score, decisions) : NULL;
        }
    }
    for (int s = 0; s <= step; s++) layer_free(&layers[s]);
    free(layers);
    return result;
}

static PyMethodDef methods[] = {
    {"solve", solve_impl, METH_VARARGS,
     "solve(table, rack, weight_tile, weight_joker, value, jokers_table, jokers_rack, copies,"
     " reference_mode, threshold, set_ok) -> (score, decisions) or None"},
    {"expansions", expansions_impl, METH_NOARGS,
     "expansions() -> the states this thread's last depth-first search expanded"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "tabletop.engine._rearrange",
                                    "Exact DP for rearrangeable Rummikub tables.", -1, methods};

PyMODINIT_FUNC PyInit__rearrange(void) { return PyModule_Create(&module); }
