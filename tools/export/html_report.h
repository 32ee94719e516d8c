/* gpuwatch report: an analyzed run as one self-contained HTML page (html_report.c). */
#ifndef GPUWATCH_HTML_REPORT_H
#define GPUWATCH_HTML_REPORT_H

#include <stdio.h>

struct an_run;

/* 0, or -1 when writing failed. */
int gw_report_html(FILE *out, const struct an_run *run);

#endif
