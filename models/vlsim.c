/* vlsim.c — the program entry point; everything happens in cli.c. */
#include "models/cli.h"

int main(int argc, char **argv)
{
    return cli_main(argc, argv);
}
