/* synth.c: built-in synthetic corpora. "stories": short English-like stories whose tails depend on
 * their heads, so a model trained at length L (64-256 bytes) has something to gain beyond L.
 *
 * Each story puts information at many distances:
 *   - short range: sound words and refrains ("woof, woof, woof"), counting ("one step, two steps");
 *   - medium range: "On the first/second/third day", a per-story refrain repeated every day;
 *   - long range: the hero's name; a lost companion named early and "found ... again" late; a
 *     packed list recalled word for word; a key fact stated early and repeated as the tail.
 * Randomness comes only from the project Rng (integer draws), so the bytes are identical on every
 * machine, and the corpus for n bytes is a prefix of the corpus for more bytes. */

#include "synth.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../core/rng.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define PICK(rng, a) ((a)[rng_below((rng), COUNT(a))])
#define STORY_MAX 8192 /* the longest possible story is ~3 KB */

/* ---- vocabulary ---- */

typedef struct { const char *name; int female; } Hero;
static const Hero heroes[] = {
    {"Mia", 1}, {"Tom", 0}, {"Lily", 1}, {"Ben", 0}, {"Anna", 1}, {"Sam", 0}, {"Lucy", 1},
    {"Max", 0}, {"Emma", 1}, {"Leo", 0}, {"Sara", 1}, {"Jack", 0}, {"Zoe", 1}, {"Finn", 0},
    {"Ella", 1}, {"Noah", 0}, {"Rosa", 1}, {"Eli", 0}, {"Nora", 1}, {"Owen", 0}, {"Ivy", 1},
    {"Hugo", 0}, {"Ruby", 1}, {"Theo", 0}, {"Maya", 1}, {"Omar", 0}, {"Lena", 1}, {"Adam", 0},
    {"Kira", 1}, {"Luke", 0}, {"Greta", 1}, {"Pablo", 0}, {"Hana", 1}, {"Ravi", 0}, {"Alice", 1},
    {"Kofi", 0}, {"Jade", 1}, {"Oscar", 0}, {"Tara", 1}, {"Felix", 0},
};
/* subject, possessive, object, reflexive, child */
static const char *pronouns[2][5] = {
    {"he", "his", "him", "himself", "boy"},
    {"she", "her", "her", "herself", "girl"},
};

typedef struct { const char *name, *sound; } Animal;
static const Animal animals[] = {
    {"dog", "woof"}, {"cat", "meow"}, {"cow", "moo"}, {"duck", "quack"}, {"owl", "hoo"},
    {"frog", "ribbit"}, {"sheep", "baa"}, {"bee", "buzz"}, {"bird", "tweet"}, {"horse", "neigh"},
    {"pig", "oink"}, {"goat", "meh"}, {"lion", "roar"}, {"mouse", "squeak"}, {"hen", "cluck"},
    {"crow", "caw"}, {"snake", "hiss"}, {"wolf", "awoo"}, {"fox", "yip"}, {"donkey", "hee-haw"},
};
static const char *pet_kinds[] = {"dog", "cat", "rabbit", "puppy", "kitten", "duck", "goat",
                                  "pony", "hamster", "turtle", "parrot", "lamb"};
static const char *pet_names[] = {"Rex", "Pip", "Bella", "Spot", "Coco", "Sunny", "Milo", "Daisy",
                                  "Bun", "Patch", "Biscuit", "Pepper", "Toby", "Lulu", "Ziggy",
                                  "Hazel", "Buttons", "Shadow", "Nibbles", "Rusty"};
static const char *things[] = {"kite", "ball", "hat", "boat", "drum", "doll", "book", "bell",
                               "scarf", "key", "ring", "teddy bear", "box", "balloon", "wagon",
                               "shell", "ribbon", "umbrella", "kazoo", "marble"};
static const char *colors[] = {"red", "blue", "green", "yellow", "white", "black", "brown",
                               "pink", "orange", "purple", "gray", "gold"};
/* for living things */
static const char *adjs[] = {"little", "big", "old", "happy", "sleepy", "funny", "shy", "brave",
                             "kind", "clever", "fluffy", "gentle", "busy", "wise", "young",
                             "friendly", "lazy", "noisy", "hungry", "tiny", "quiet", "curious",
                             "grumpy", "playful"};
/* for the hero */
static const char *kid_adjs[] = {"little", "happy", "brave", "kind", "clever", "curious", "quiet",
                                 "shy", "young", "friendly", "cheerful", "busy", "funny", "gentle",
                                 "smart", "small"};
/* for trees, rocks, hills, logs and bridges */
static const char *sizes[] = {"big", "old", "small", "tiny", "huge", "dark", "strange", "pretty",
                              "mossy", "quiet", "lonely", "giant", "little", "tall"};
static const char *feelings[] = {"happy", "sad", "tired", "scared", "proud", "excited", "calm",
                                 "hungry", "curious", "glad", "brave", "sleepy"};
/* the ones you keep going despite */
static const char *hardships[] = {"tired", "scared", "cold", "hungry", "sleepy", "sad", "wet"};
static const char *weathers[] = {"sunny", "windy", "rainy", "cold", "warm", "cloudy", "foggy",
                                 "bright", "snowy", "gray"};
static const char *foods[] = {"bread", "soup", "cake", "pie", "cheese", "rice", "berries",
                              "cookies", "toast", "honey", "carrots", "nuts", "plums", "apples",
                              "corn", "pancakes"};
static const char *countables[] = {"apples", "plums", "pears", "cookies", "carrots", "nuts",
                                   "eggs", "buns", "cherries", "acorns", "shells", "sweets"};
/* counted one by one: the plural is the word plus "s" */
static const char *counted[] = {"duck", "bird", "frog", "star", "tree", "stone", "cloud", "bee",
                                "boat", "hill", "flower", "cow"};
static const char *places[] = {"the park", "the forest", "the river", "the hill", "the beach",
                               "the farm", "the garden", "the lake", "the old mill", "the market",
                               "the meadow", "the bridge", "the school", "the castle", "the pond",
                               "the woods", "the big tree", "the well", "the barn", "the village"};
static const char *pack_items[] = {"a cup", "a map", "a lamp", "a rope", "an apple", "a coat",
                                   "a book", "a spoon", "a blanket", "a pencil",
                                   "a bottle of water", "a sandwich", "a torch", "a ball of string",
                                   "a compass", "a pair of socks", "a cookie", "a whistle", "a net",
                                   "a bucket", "a towel", "a jar of jam", "a pillow", "a comb",
                                   "a brush", "an umbrella", "a candle", "a snack", "a hat",
                                   "a scarf"};
static const char *secret_words[] = {"plum", "moon", "apple", "river", "star", "cloud", "pickle",
                                     "button", "rocket", "tiger", "banana", "pebble", "candle",
                                     "turnip", "maple", "thunder", "lemon", "penguin", "muffin",
                                     "rainbow", "whistle", "marble", "cactus", "velvet", "walnut",
                                     "comet", "puddle", "ginger", "mango", "pepper"};
static const char *numbers[] = {"zero", "one", "two", "three", "four", "five", "six", "seven",
                                "eight", "nine", "ten", "eleven", "twelve", "thirteen",
                                "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
                                "nineteen", "twenty"};
static const char *ordinals[] = {"first", "second", "third", "fourth", "fifth", "sixth",
                                 "seventh", "eighth", "ninth", "tenth"};

/* ---- sentence templates: {slot} expands to a word, {a slot} adds "a"/"an" ---- */

/* every intro names the hero with "named", so tests can find the hero */
static const char *intros[] = {
    "Once upon a time, there was {a kadj} {kid} named {name}.",
    "There once was {a kadj} {kid} named {name} who lived near {place}.",
    "Long ago, in a small village, lived {a kadj} {kid} named {name}.",
    "Not far from {place}, there lived a {kid} named {name}.",
    "This is a story about {a kadj} {kid} named {name}.",
};
static const char *day_openers[] = {
    "On the {ord} day, {name} walked to {place}.",
    "On the {ord} day, {he} went past {place}.",
    "On the {ord} day, the weather was {weather}.",
    "On the {ord} day, {he} woke up early and looked around {place}.",
    "On the {ord} day, {name} came to {place}.",
    "On the {ord} day, {he} set off at dawn.",
};
/* a per-story refrain, said once a day: repetition at a distance of a few hundred bytes */
static const char *refrains[] = {
    "{He} walked and walked and walked.",
    "{name} sang, \"La, la, la, the road is long.\"",
    "Step, step, step, went {his} little feet.",
    "{He} said to {self}, \"Do not give up.\"",
    "Up and down, up and down, went the road.",
    "{He} looked up, {he} looked down, {he} looked all around.",
    "The wind went whoo, whoo, whoo.",
    "\"Where can it be?\" {name} asked.",
};
static const char *fillers[] = {
    "{name} saw {a adj} {animal} near {place}.",
    "The {animal} said, \"{sound}, {sound}, {sound}!\"",
    "{He} ate some {food} and felt much better.",
    "The day was {weather}, and the air smelled of {food}.",
    "{He} sat under {a size} tree and rested for a while.",
    "{name} met {a adj} {animal}. \"Hello,\" said the {it}.",
    "\"Where are you going?\" asked {a adj} {animal}. \"To {place},\" said {name}.",
    "{He} crossed {a size} bridge over a cold stream.",
    "{name} was {hard}, but {he} kept going.",
    "{A color} bird flew over {his} head.",
    "{He} picked {a color} flower and put it in {his} pocket.",
    "{name} shared some {food} with {a adj} {animal}.",
    "The path was long, but {name} was brave.",
    "{He} heard a sound. It was only {a adj} {animal}.",
    "{He} drank some cold water and felt better.",
    "The sun went down, and the stars came out.",
    "{name} sang a song about {a color} {animal}.",
    "{He} waved to {friend}, who was working in the garden.",
    "{friend} gave {him} some {food} for the road.",
    "\"Be careful,\" said {friend}. \"The road is long.\"",
    "{He} jumped over {a size} log.",
    "{name} climbed up {a size} hill and looked around.",
    "Everything was quiet. Only {a animal} made a sound: {sound}.",
    "It started to rain, so {he} hid under {a size} tree.",
    "{name} looked left and right, but {he} saw nothing.",
    "{A adj} {animal} walked with {him} for a while.",
    "{name} laughed, and the {animal} laughed too.",
    "{He} made a wish on {a color} stone.",
    "{name} said, \"I am not afraid.\"",
    "{He} ran and ran and ran until {he} was {hard}.",
    "Tap, tap, tap, went the rain on the leaves.",
    "{name} took a nap in the soft grass.",
    "{A adj} {animal} asked {him} for some {food}, and {name} gave it some.",
    "{He} played with {a color} ball for a while.",
    "{He} said hello to {a adj} {animal}, and the {it} said {sound}.",
    "{name} found {a color} feather and kept it.",
    "The {animal} was {adj}, and {name} was {feel}.",
    "At noon, {he} stopped near {place} to eat some {food}.",
};
static const char *found_lines[] = {
    "Later that day, {name} found {lost} again.",
    "At last, near {dest}, {name} found {lost} again.",
    "Then, behind {a size} rock, {name} found {lost} again.",
    "Just before dark, {name} found {lost} again.",
};
static const char *missings[] = {
    "{name} wanted to find {lost}.",
    "{He} was sad and wanted {lost} back.",
    "{He} looked everywhere, but {he} could not see it.",
    "{name} cried a little. Then {he} made a plan.",
};
static const char *joys[] = {
    "{name} was so happy.",
    "{He} held {lost} tight and laughed.",
    "\"There you are!\" said {name}.",
    "{He} jumped up and down with joy.",
};
static const char *packings[] = {
    "{name} packed {list}.",
    "Before {he} left, {name} packed {list}.",
    "So {name} packed {list}.",
};
static const char *recalls[] = {
    "Good thing {he} had packed {list}.",
    "{He} was glad that {he} had packed {list}.",
    "{He} opened {his} bag. {He} had packed {list}.",
    "{name} remembered that {he} had packed {list}.",
};
static const char *endings[] = {
    "{name} went home, tired but happy.",
    "That night, {name} slept well.",
    "{name} and {lost} went home together.",
    "When {name} got home, {friend} was waiting.",
};

/* ---- one story being written ---- */

typedef struct {
    Rng *rng;
    char text[STORY_MAX];
    size_t len;
    int cap_next;       /* the next letter starts a sentence: capitalise it */
    const Hero *hero;
    const char *friend; /* a second named character */
    const char *dest;   /* where the lost companion turns up */
    char lost[48];      /* "the red kite" or "Rex": lost early, found again late */
    char list[160];     /* "a cup, a map and a lamp": packed early, recalled late */
    char seen[128];     /* "the fox, the frog and the bee": met on the way, told about at home */
    char fact[96];      /* the key-fact sentence: said early and again as the tail */
    int day;            /* {ord} */
    int animal;         /* last animal picked: {it} and {sound} refer to it */
} Story;

static void put_char(Story *s, char c) {
    if (s->len + 1 >= STORY_MAX) return; /* unreachable: stories are < 4 KB */
    char prev = s->len ? s->text[s->len - 1] : '\n';
    if (s->cap_next && c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) s->cap_next = 0;
    else if (c == '.' || c == '!' || c == '?') s->cap_next = 1;
    else if (c == '"') s->cap_next = (prev == ' '); /* opening quote yes; closing ("Hi!" said) no */
    s->text[s->len++] = c;
}

static void put_str(Story *s, const char *str) {
    while (*str) put_char(s, *str++);
}

static int starts_with_vowel(const char *w) { return w[0] && strchr("aeiouAEIOU", w[0]) != NULL; }
static const char *article(const char *w) { return starts_with_vowel(w) ? "an" : "a"; }

static const char *pronoun(Story *s, int which) { return pronouns[s->hero->female][which]; }

static int key_is(const char *key, size_t n, const char *want) {
    return strlen(want) == n && memcmp(key, want, n) == 0;
}

/* Word for {key}. Story slots say the same thing every time; vocabulary slots draw afresh. */
static const char *slot(Story *s, const char *key, size_t n) {
    Rng *rng = s->rng;
    if (key_is(key, n, "name")) return s->hero->name;
    if (key_is(key, n, "he") || key_is(key, n, "He")) return pronoun(s, 0);
    if (key_is(key, n, "his") || key_is(key, n, "His")) return pronoun(s, 1);
    if (key_is(key, n, "him")) return pronoun(s, 2);
    if (key_is(key, n, "self")) return pronoun(s, 3);
    if (key_is(key, n, "kid")) return pronoun(s, 4);
    if (key_is(key, n, "friend")) return s->friend;
    if (key_is(key, n, "lost")) return s->lost;
    if (key_is(key, n, "dest")) return s->dest;
    if (key_is(key, n, "list")) return s->list;
    if (key_is(key, n, "ord")) return ordinals[s->day];
    if (key_is(key, n, "animal")) {
        s->animal = (int)rng_below(rng, COUNT(animals));
        return animals[s->animal].name;
    }
    if (key_is(key, n, "it")) return animals[s->animal].name;
    if (key_is(key, n, "sound")) return animals[s->animal].sound;
    if (key_is(key, n, "adj")) return PICK(rng, adjs);
    if (key_is(key, n, "kadj")) return PICK(rng, kid_adjs);
    if (key_is(key, n, "size")) return PICK(rng, sizes);
    if (key_is(key, n, "hard")) return PICK(rng, hardships);
    if (key_is(key, n, "color")) return PICK(rng, colors);
    if (key_is(key, n, "place")) return PICK(rng, places);
    if (key_is(key, n, "food")) return PICK(rng, foods);
    if (key_is(key, n, "feel")) return PICK(rng, feelings);
    if (key_is(key, n, "weather")) return PICK(rng, weathers);
    return "{?}"; /* a template typo; the tests reject any '{' in the output */
}

/* Append one template as the next sentence(s): a space before it unless a paragraph starts. */
static void say(Story *s, const char *tmpl) {
    if (s->len && s->text[s->len - 1] != '\n') put_char(s, ' ');
    s->cap_next = 1;
    for (const char *p = tmpl; *p; p++) {
        const char *end = *p == '{' ? strchr(p, '}') : NULL;
        if (!end) {
            put_char(s, *p);
            continue;
        }
        const char *key = p + 1;
        size_t n = (size_t)(end - key);
        int with_article = n > 2 && (key[0] == 'a' || key[0] == 'A') && key[1] == ' ';
        if (with_article) key += 2, n -= 2;
        const char *word = slot(s, key, n);
        if (with_article) {
            put_str(s, article(word));
            put_char(s, ' ');
        }
        put_str(s, word);
        p = end;
    }
}

/* say() a printf-formatted template: for sentences built from the story's own choices */
static void sayf(Story *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sayf(Story *s, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    say(s, buf);
}

static void paragraph(Story *s) { put_char(s, '\n'); }

/* n distinct indices below limit (n is small, so rejection is cheap) */
static void pick_distinct(Rng *rng, int *idx, int n, int limit) {
    for (int i = 0; i < n; i++) {
        int again;
        do {
            idx[i] = (int)rng_below(rng, (uint64_t)limit);
            again = 0;
            for (int j = 0; j < i; j++) again |= idx[j] == idx[i];
        } while (again);
    }
}

/* "x, y and z" into buf */
static void join_list(char *buf, size_t cap, const char **words, int n, const char *article) {
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < n && len < cap; i++) {
        const char *sep = i == 0 ? "" : i == n - 1 ? " and " : ", ";
        len += (size_t)snprintf(buf + len, cap - len, "%s%s%s", sep, article, words[i]);
    }
}

/* counting at short range: numbers that go up by one, as words */
static void counting(Story *s) {
    Rng *rng = s->rng;
    char buf[384];
    size_t len = 0;
    int n = 3 + (int)rng_below(rng, 5); /* up to seven */
    switch (rng_below(rng, 4)) {
    case 0:
        len += (size_t)snprintf(buf + len, sizeof buf - len, "{He} took one step");
        for (int i = 2; i <= n; i++)
            len += (size_t)snprintf(buf + len, sizeof buf - len, ", %s steps", numbers[i]);
        snprintf(buf + len, sizeof buf - len, ".");
        break;
    case 1: {
        const char *noun = PICK(rng, counted);
        len += (size_t)snprintf(buf + len, sizeof buf - len, "{He} counted the %ss: one", noun);
        for (int i = 2; i <= n; i++)
            len += (size_t)snprintf(buf + len, sizeof buf - len, ", %s", numbers[i]);
        snprintf(buf + len, sizeof buf - len, ".");
        break;
    }
    case 2: {
        const char *noun = PICK(rng, counted);
        len += (size_t)snprintf(buf + len, sizeof buf - len, "One %s", noun);
        for (int i = 2; i <= n; i++)
            len += (size_t)snprintf(buf + len, sizeof buf - len, ", %s %ss", numbers[i], noun);
        snprintf(buf + len, sizeof buf - len, ". {name} counted them all.");
        break;
    }
    default: { /* one less: the answer depends on a number a sentence back */
        const char *what = PICK(rng, countables);
        int have = 3 + (int)rng_below(rng, 10);
        snprintf(buf, sizeof buf,
                 "{name} had %s %s. {He} gave one to {a adj} {animal}, so now {he} had %s %s.",
                 numbers[have], what, numbers[have - 1], what);
        break;
    }
    }
    say(s, buf);
}

/* the key fact: one sentence said early and again at the very end; the lead-ins set it up */
static void choose_fact(Story *s, const char **early, const char **late) {
    Rng *rng = s->rng;
    switch (rng_below(rng, 4)) {
    case 0:
        snprintf(s->fact, sizeof s->fact, "The secret word was %s.", PICK(rng, secret_words));
        *early = "{friend} told {him} a secret.";
        *late = "{name} still remembered the secret word.";
        break;
    case 1:
        snprintf(s->fact, sizeof s->fact, "The magic number was %s.",
                 numbers[2 + rng_below(rng, COUNT(numbers) - 2)]);
        *early = "{name} had a magic number.";
        *late = "{name} did not forget the magic number.";
        break;
    case 2:
        snprintf(s->fact, sizeof s->fact, "%s's favorite color was %s.", s->friend,
                 PICK(rng, colors));
        *early = "{name} had a good friend, {friend}.";
        *late = "{name} still knew what {friend} liked best.";
        break;
    default:
        snprintf(s->fact, sizeof s->fact, "The password for the tree house was %s.",
                 PICK(rng, secret_words));
        *early = "{name} and {friend} had a tree house.";
        *late = "At the tree house, {name} said the password.";
        break;
    }
}

static void write_story(Story *s) {
    Rng *rng = s->rng;
    s->len = 0;
    s->day = 0;
    s->animal = 0;
    s->hero = &PICK(rng, heroes);
    do s->friend = PICK(rng, heroes).name;
    while (s->friend == s->hero->name);
    s->dest = PICK(rng, places);

    /* 1. who: the hero, the companion, the key fact */
    say(s, PICK(rng, intros));
    int is_pet = rng_below(rng, 3) == 0;
    if (is_pet) {
        const char *kind = PICK(rng, pet_kinds), *adj = PICK(rng, adjs);
        snprintf(s->lost, sizeof s->lost, "%s", PICK(rng, pet_names));
        if (rng_below(rng, 2))
            sayf(s, "{name} had %s %s %s named %s.", article(adj), adj, kind, s->lost);
        else
            sayf(s, "{name} lived with %s %s called %s.", article(kind), kind, s->lost);
        sayf(s, rng_below(rng, 2) ? "%s liked to run and play." : "%s was {his} best friend.",
             s->lost);
    } else {
        const char *color = PICK(rng, colors), *thing = PICK(rng, things);
        snprintf(s->lost, sizeof s->lost, "the %s %s", color, thing);
        if (rng_below(rng, 2)) {
            sayf(s, "{name} had %s %s %s.", article(color), color, thing);
            sayf(s, "The %s was {his} best toy.", thing);
        } else {
            sayf(s, "{name}'s favorite toy was %s %s %s.", article(color), color, thing);
            sayf(s, "{He} took the %s everywhere.", thing);
        }
    }
    const char *fact_early, *fact_late;
    choose_fact(s, &fact_early, &fact_late);
    if (rng_below(rng, 2)) say(s, fact_early);
    say(s, s->fact);
    if (rng_below(rng, 2)) say(s, PICK(rng, fillers));
    paragraph(s);

    /* 2. the journey: lost, packing, days counted out loud */
    if (is_pet)
        say(s, rng_below(rng, 2) ? "One day, {lost} ran away." : "One morning, {lost} was gone.");
    else
        say(s, rng_below(rng, 2) ? "One {weather} morning, the wind blew {lost} far away."
                                 : "One day, {name} could not find {lost}.");
    say(s, PICK(rng, missings));
    if (rng_below(rng, 2)) say(s, "\"I saw {lost} near {dest},\" said {friend}.");
    const char *items[4];
    int idx[4], n_items = 3 + (int)rng_below(rng, 2);
    pick_distinct(rng, idx, n_items, (int)COUNT(pack_items));
    for (int i = 0; i < n_items; i++) items[i] = pack_items[idx[i]];
    join_list(s->list, sizeof s->list, items, n_items, "");
    say(s, PICK(rng, packings));

    const char *refrain = PICK(rng, refrains);
    int n_days = 2 + (int)rng_below(rng, 5); /* up to six */
    int count_day = (int)rng_below(rng, (uint64_t)n_days);
    int seen_day = rng_below(rng, 2) ? (int)rng_below(rng, (uint64_t)n_days) : -1;
    s->seen[0] = 0;
    for (int d = 0; d < n_days; d++) {
        s->day = d;
        say(s, PICK(rng, day_openers));
        int n_fill = (int)rng_below(rng, 3);
        for (int i = 0; i < n_fill; i++) say(s, PICK(rng, fillers));
        if (d == count_day) counting(s);
        if (d == seen_day) {
            const char *seen[3];
            pick_distinct(rng, idx, 3, (int)COUNT(animals));
            for (int i = 0; i < 3; i++) seen[i] = animals[idx[i]].name;
            char with_a[128];
            /* "a owl" is wrong: give each animal its own article */
            snprintf(with_a, sizeof with_a, "%s %s, %s %s and %s %s", article(seen[0]), seen[0],
                     article(seen[1]), seen[1], article(seen[2]), seen[2]);
            sayf(s, "On the way, {he} saw %s.", with_a);
            join_list(s->seen, sizeof s->seen, seen, 3, "the ");
        }
        say(s, refrain);
    }
    paragraph(s);

    /* 3. the far references: found again, the list recalled, the key fact as the tail */
    say(s, PICK(rng, found_lines));
    say(s, PICK(rng, joys));
    say(s, PICK(rng, recalls));
    if (s->seen[0]) sayf(s, "{He} told {friend} about %s.", s->seen);
    say(s, PICK(rng, endings));
    say(s, fact_late);
    say(s, s->fact);
    if (rng_below(rng, 3) == 0) say(s, "The end.");
    put_str(s, "\n\n");
}

static void gen_stories(Rng *rng, char *out, size_t nbytes) {
    Story *s = xmalloc(sizeof *s);
    s->rng = rng;
    size_t done = 0;
    while (done < nbytes) {
        write_story(s);
        size_t n = s->len < nbytes - done ? s->len : nbytes - done;
        memcpy(out + done, s->text, n);
        done += n;
    }
    free(s);
}

/* ---- registry ---- */

typedef struct {
    const char *name;
    void (*generate)(Rng *rng, char *out, size_t nbytes);
} Generator;

static const Generator generators[] = {
    {"stories", gen_stories},
};

const char *synth_names(void) { return "stories"; /* keep in step with generators[] */ }

/* splitmix64: small seeds (0, 1, 2...) start xorshift from well-mixed states */
static uint64_t mix_seed(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

int synth_generate(const char *name, uint64_t seed, size_t nbytes, char **out) {
    *out = NULL;
    for (size_t i = 0; i < COUNT(generators); i++) {
        if (strcmp(name, generators[i].name) != 0) continue;
        Rng rng;
        rng_seed(&rng, mix_seed(seed));
        char *buf = xmalloc(nbytes + 1);
        generators[i].generate(&rng, buf, nbytes);
        buf[nbytes] = 0;
        *out = buf;
        return 0;
    }
    return pelab_fail("synth: unknown generator '%s' (available: %s)", name, synth_names());
}
