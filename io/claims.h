/* claims.h: the published claims the standard suite checks (docs/claims.txt), read from a text
 * file. One claim a line, eight fields separated by '|', or nine with LOOKS (spaces around a field
 * are dropped); '#' starts a comment line, blank lines are skipped:
 *
 *   ID | PAPER | STATEMENT | PROTOCOL | AT | A | RELATION | WHY_UNTESTABLE [| LOOKS]
 *
 *   ID        [a-z0-9-]+, unique in the file
 *   PAPER     who claimed it ("Press et al. 2022")
 *   STATEMENT the claim in words
 *   PROTOCOL  the suite protocol that tests it ([a-z0-9_-]+; the suite checks that it exists)
 *   AT        the length it is judged at: "4L" (a multiple of the training length, language
 *             modelling) or "12" (a task length)
 *   A         the series the claim is about: a scheme as trained ("alibi") or under a rule or
 *             fine-tune as compare labels it ("rope+yarn:4", "rope+pi:4+ft")
 *   RELATION  better:B    A beats series B at AT (lower loss, higher accuracy)
 *             learns:B    scheme A learns the task where scheme B does not: A's in-distribution
 *                         exact match (the gate figure) above B's, over every seed, gate or not
 *                         (a claim about learning the task; AT is then a trained length, for show)
 *             flat:TOL    A at AT is worse than A at the protocol's reference length by less than
 *                         TOL (nats, or accuracy points)
 *             degrades:TOL  ... by more than TOL
 *             keygap:B    (language modelling) A's advantage over series B at AT is larger on the
 *                         key tokens than on all tokens (LongPPL, Fang et al. 2024): per seed,
 *                         (B - A) in key-token loss minus (B - A) in the same tokens' loss, > 0
 *   WHY_UNTESTABLE  empty, or why the toy scale cannot test the claim (then PROTOCOL, AT, A and
 *             RELATION may be "-")
 *   LOOKS     optional: the claim's own looks in `suite full`, fixed before any run (a power
 *             analysis): seeds per series at each, increasing, from 2 to CLAIM_MAX_SEEDS, at most
 *             CLAIM_MAX_LOOKS of them ("5,8,12,18,24"); empty or absent: the setting's looks. Only
 *             a testable claim takes them. `suite quick`, --looks and --seeds override them
 *             (lab/claim_family.h: each claim spends alpha over its own looks)
 *
 * Library code: errors are -1 with one message naming the file, line and field. */
#ifndef PELAB_CLAIMS_H
#define PELAB_CLAIMS_H

#include <stddef.h>

enum { CLAIM_BETTER, CLAIM_FLAT, CLAIM_DEGRADES, CLAIM_LEARNS, CLAIM_KEYGAP };
/* the bounds of the sequential rule's looks (lab/claim_family.h): looks a claim may take, and the
 * seeds per series a look may reach (lab/claim_stat.h keeps that many per series) */
enum { CLAIM_MAX_LOOKS = 8, CLAIM_MAX_SEEDS = 32 };

typedef struct {
    char id[48];
    char paper[96];
    char statement[256];
    char protocol[32];
    double at;           /* AT's number: a multiple of L when at_is_mult, else a task length */
    int at_is_mult;
    char a[128];
    int relation;        /* CLAIM_* */
    char b[128];         /* better, learns, keygap: the other series */
    double tol;          /* flat, degrades: the tolerance */
    char untestable[256]; /* "" when testable */
    int n_looks;         /* LOOKS: its own looks in suite full (0: the setting's) */
    int looks[CLAIM_MAX_LOOKS]; /* seeds per series at each, increasing */
    int line;            /* where it stands in the file */
} Claim;

typedef struct {
    int n;
    Claim *c; /* [n] */
} ClaimList;

/* parses text[n] (need not end in NUL); name is the file's name for messages. 0, or -1 with
 * pelab_errmsg "NAME:LINE: FIELD: ..." (out is then empty) */
int claims_parse(const char *text, size_t n, const char *name, ClaimList *out);
/* reads and parses path */
int claims_load(const char *path, ClaimList *out);
void claims_free(ClaimList *l);
/* the relation as written ("better:rope", "flat:0.1", "keygap:rope") into buf */
void claim_relation_str(const Claim *c, char *buf, size_t n);
/* "5,8,12": looks of seeds per series (increasing, 2 to CLAIM_MAX_SEEDS, 1 to max of them) into
 * seeds[max]; their count, or -1 with pelab_errmsg "'TEXT': expected ..." */
int claim_looks_parse(const char *text, int *seeds, int max);
/* seeds[n] as written ("5,8,12"; "" for none) into buf */
void claim_looks_str(const int *seeds, int n, char *buf, size_t size);

#endif
