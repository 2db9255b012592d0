/* vlcalib.c — main() of the vlcalib program; everything else is in
 * vlcalib_cli.c, where tests can reach it. Must never hold logic. */
#include <stdio.h>
#include "calib/vlcalib.h"

int main(int argc, char **argv)
{
    return vlcalib_main(argc, argv, stdout, stderr);
}
