/* rp_flow.c — flow-style number lists in the tools' lines. See rp_flow.h. */
#include "calib/realpipe/rp_flow.h"

#include <math.h>
#include <stdlib.h>

int rp_flow_read(const char **s, double *x, int max)
{
    const char *c = *s;
    if (*c++ != '[')
        return -1;
    int n = 0;
    for (;;) {
        char *end;
        if (n == max)
            return -1;
        x[n] = strtod(c, &end);
        if (end == c || !isfinite(x[n]))
            return -1;
        n++;
        c = end;
        while (*c == ' ')
            c++;
        if (*c == ']')
            break;
        if (*c++ != ',')
            return -1;
    }
    *s = c + 1;
    return n;
}

void rp_flow_write(FILE *f, const double *x, int n)
{
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%.6g", i ? ", " : "[", x[i]);
    fprintf(f, "]");
}
