/*
 * error.c -- the TlError object: one status code plus one user message.
 *
 * A run owns one TlError.  The first failure fills it and every caller above
 * forwards the status unchanged (TL_TRY), so the message the user sees is
 * written where the most is known.  The message is formatted into a fixed
 * buffer (truncated, never allocated), so reporting out-of-memory cannot
 * itself run out of memory.  tally_run hands the code to the program as a
 * TallyStatus (lib/tally.h), and only the program turns it into an exit
 * status (cmd/main.c).
 */
#include "core.h"

#include <stdarg.h>
#include <stdio.h>

/* Set err's code and printf-formatted message (truncated to TL_ERRMSG_MAX-1
 * bytes, never in the middle of a UTF-8 character).  err may be NULL.  Returns code. */
TlStatus tl_error(TlError *err, TlStatus code, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (!err) return code;
    err->code = code;
    err->col = NULL;
    va_start(ap, fmt);
    n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    if (n < 0) {
        err->msg[0] = '\0';
    } else if ((size_t)n >= sizeof err->msg) {
        /* truncated: do not end inside a UTF-8 sequence */
        size_t end = sizeof err->msg - 1, k = end;
        while (k > 0 && ((unsigned char)err->msg[k - 1] & 0xC0) == 0x80) k--;
        if (k > 0 && ((unsigned char)err->msg[k - 1] & 0x80)) {
            unsigned char lead = (unsigned char)err->msg[k - 1];
            size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
            if (end - (k - 1) < need) end = k - 1;
        }
        err->msg[end] = '\0';
    }
    return code;
}

/* Set TL_ERR_OOM with the fixed message "out of memory"; never allocates.
 * err may be NULL.  Returns TL_ERR_OOM. */
TlStatus tl_error_oom(TlError *err)
{
    static const char m[] = "out of memory";
    if (!err) return TL_ERR_OOM;
    err->code = TL_ERR_OOM;
    err->col = NULL;
    memcpy(err->msg, m, sizeof m);
    return TL_ERR_OOM;
}
