/* fuzz_claims.c: the suite's claims file (io/claims.c claims_parse) on arbitrary bytes.
 *
 * Input: the file's bytes. A file that parses has at least one claim, each with an id of
 * [a-z0-9-] unique in the file, a non-empty paper and statement, and either a reason it cannot be
 * tested or a protocol, a positive finite length and a relation (better, learns or keygap with another series, or
 * a tolerance >= 0), and looks (LOOKS) only when testable, at most CLAIM_MAX_LOOKS of them, increasing from
 * 2 to CLAIM_MAX_SEEDS; its line numbers increase; every relation and its looks write back
 * (claim_relation_str, claim_looks_str) to text that parses again on the same line. A file refused
 * says why in one line naming the file.
 * Never a crash, a read past the input or a leak. */
#include <math.h>
#include <stdint.h>

#include "../../core/error.h"
#include "../../io/claims.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_single_thread();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *exact = malloc(size ? size : 1); /* exactly the input's bytes, no NUL: ASan sees a read past them */
    memcpy(exact, data, size);
    ClaimList l;
    pelab_errmsg[0] = 0;
    if (claims_parse(exact, size, "f.txt", &l) != 0) {
        FUZZ_CHECK(strncmp(pelab_errmsg, "f.txt", 5) == 0 && !strchr(pelab_errmsg, '\n') && l.n == 0 && !l.c,
                   "a refusal without a one-line message naming the file: '%s'", pelab_errmsg);
        free(exact);
        return 0;
    }
    FUZZ_CHECK(l.n >= 1 && l.c, "parsed, but no claims");
    for (int i = 0; i < l.n; i++) {
        const Claim *c = &l.c[i];
        FUZZ_CHECK(c->id[0] && strspn(c->id, "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen(c->id), "id '%s'", c->id);
        FUZZ_CHECK(c->paper[0] && c->statement[0], "claim %s: empty paper or statement", c->id);
        FUZZ_CHECK(i == 0 || c->line > l.c[i - 1].line, "claim %s: line %d after %d", c->id, c->line, l.c[i - 1].line);
        for (int j = 0; j < i; j++) FUZZ_CHECK(strcmp(l.c[j].id, c->id) != 0, "id %s twice", c->id);
        FUZZ_CHECK(c->n_looks >= 0 && c->n_looks <= CLAIM_MAX_LOOKS && (!c->n_looks || !c->untestable[0]),
                   "claim %s: %d looks", c->id, c->n_looks);
        for (int k = 0; k < c->n_looks; k++)
            FUZZ_CHECK(c->looks[k] >= 2 && c->looks[k] <= CLAIM_MAX_SEEDS && (!k || c->looks[k] > c->looks[k - 1]),
                       "claim %s: look %d at %d seeds", c->id, k, c->looks[k]);
        if (c->untestable[0] && !c->protocol[0]) continue;
        FUZZ_CHECK(c->protocol[0] && isfinite(c->at) && c->at > 0 && c->a[0], "claim %s: protocol, length or series",
                   c->id);
        int pair = c->relation == CLAIM_BETTER || c->relation == CLAIM_LEARNS || c->relation == CLAIM_KEYGAP;
        FUZZ_CHECK(pair ? c->b[0] && strcmp(c->a, c->b) != 0 : isfinite(c->tol) && c->tol >= 0,
                   "claim %s: relation", c->id);
        /* the relation writes back to a line that parses to the same claim */
        char rel[300], looks[64], line[1300];
        claim_relation_str(c, rel, sizeof rel);
        claim_looks_str(c->looks, c->n_looks, looks, sizeof looks);
        int n = snprintf(line, sizeof line, "%s | %s | %s | %s | %.17g%s | %s | %s | %s | %s\n", c->id, c->paper,
                         c->statement, c->protocol, c->at, c->at_is_mult ? "L" : "", c->a, rel, c->untestable, looks);
        ClaimList again;
        int rc = claims_parse(line, (size_t)n, "again", &again);
        FUZZ_CHECK(rc == 0 && again.n == 1 && again.c[0].relation == c->relation && again.c[0].at == c->at &&
                       strcmp(again.c[0].b, c->b) == 0 && (pair || again.c[0].tol == c->tol) &&
                       again.c[0].n_looks == c->n_looks && !memcmp(again.c[0].looks, c->looks, sizeof c->looks),
                   "claim %s written back as '%s' does not parse the same: %s", c->id, line, rc ? pelab_errmsg : "");
        if (rc == 0) claims_free(&again);
    }
    claims_free(&l);
    free(exact);
    return 0;
}
