/* pelab: a position-encoding laboratory. main() only dispatches subcommands. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    (void)argc, (void)argv;
    return 0;
}
