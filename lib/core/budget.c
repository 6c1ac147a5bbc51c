/*
 * budget.c -- the run's memory budget (budget.h): reservations over one
 * atomic count, the size syntax of --memory-limit, and what the machine
 * and the cgroup allow.
 *
 * A reservation grows by compare-and-swap on the budget's count, so a
 * request that would pass the limit takes nothing and two operators on two
 * threads never both get the last bytes.
 */
#include "budget.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* See budget.h. */
void tl_budget_init(TlBudget *b, uint64_t limit)
{
    memset(b, 0, sizeof *b);
    b->limit = limit;
    atomic_init(&b->used, 0);
    atomic_init(&b->peak, 0);
    atomic_init(&b->spilled, 0);
    atomic_init(&b->read_back, 0);
    atomic_init(&b->sort_runs, 0);
}

/* See budget.h. */
bool tl_reserve_grow(TlReservation *r, uint64_t bytes)
{
    TlBudget *b = r->b;
    if (!b) {
        r->held += bytes;
        return true;
    }
    uint64_t cur = atomic_load(&b->used), next;
    do {
        if (bytes > b->limit || cur > b->limit - bytes) return false;
        next = cur + bytes;
    } while (!atomic_compare_exchange_weak(&b->used, &cur, next));
    r->held += bytes;
    uint64_t pk = atomic_load(&b->peak);
    while (next > pk && !atomic_compare_exchange_weak(&b->peak, &pk, next)) {
    }
    return true;
}

/* See budget.h. */
void tl_reserve_shrink(TlReservation *r, uint64_t bytes)
{
    if (bytes > r->held) bytes = r->held;
    r->held -= bytes;
    if (r->b) atomic_fetch_sub(&r->b->used, bytes);
}

/* See budget.h. */
void tl_reserve_release(TlReservation *r)
{
    tl_reserve_shrink(r, r->held);
}

/* See budget.h. */
void tl_size_text(uint64_t n, char *buf, size_t cap)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    if (n < 1024) {
        snprintf(buf, cap, "%llu bytes", (unsigned long long)n);
        return;
    }
    double v = (double)n;
    int u = -1;
    while (v >= 1024 && u < 3) {
        v /= 1024;
        u++;
    }
    if (v == (double)(uint64_t)v) snprintf(buf, cap, "%llu %s", (unsigned long long)v, units[u]);
    else snprintf(buf, cap, "%.1f %s", v, units[u]);
}

/* See budget.h. */
TlStatus tl_budget_too_small(const TlBudget *b, const char *op, uint64_t need, TlError *err)
{
    char nt[32], lt[32];
    tl_size_text(need, nt, sizeof nt);
    tl_size_text(b ? b->limit : 0, lt, sizeof lt);
    return tl_error(err, TL_ERR_DATA,
                    "%s needs at least %s of memory; the memory limit is %s%s%s%s "
                    "(raise --memory-limit)",
                    op, nt, lt, b && b->limit_text ? " (" : "",
                    b && b->limit_text ? b->limit_text : "", b && b->limit_text ? ")" : "");
}

/* See budget.h. */
bool tl_size_parse(const char *s, uint64_t *out)
{
    static const struct {
        const char *name;
        double mult;
    } units[] = {
        {"", 1}, {"b", 1},
        {"k", 1e3}, {"kb", 1e3}, {"m", 1e6}, {"mb", 1e6},
        {"g", 1e9}, {"gb", 1e9}, {"t", 1e12}, {"tb", 1e12},
        {"kib", 1024.0}, {"mib", 1048576.0}, {"gib", 1073741824.0},
        {"tib", 1099511627776.0},
    };
    char *end;
    if (!s || !isdigit((unsigned char)s[0])) return false;
    double v = strtod(s, &end);
    if (end == s || v != v) return false;
    if (strcmp(end, "%") == 0) {
        if (v <= 0 || v > 100) return false;
        double b = (double)tl_mem_physical() * v / 100.0;
        if (b < 1) return false;
        *out = (uint64_t)b;
        return true;
    }
    char unit[8];
    size_t n = strlen(end);
    if (n >= sizeof unit) return false;
    for (size_t i = 0; i <= n; i++) unit[i] = (char)tolower((unsigned char)end[i]);
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(unit, units[i].name) != 0) continue;
        double b = v * units[i].mult;
        if (b < 1 || b >= 1.8e19) return false;
        *out = (uint64_t)b;
        return true;
    }
    return false;
}

/* See budget.h. */
uint64_t tl_mem_physical(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || size <= 0) return (uint64_t)1 << 32;
    return (uint64_t)pages * (uint64_t)size;
}

/* The number in file path ("max" or missing: UINT64_MAX). */
static uint64_t read_limit(const char *path)
{
    FILE *f = fopen(path, "r");
    char buf[64];
    uint64_t v = UINT64_MAX;
    if (!f) return v;
    if (fgets(buf, sizeof buf, f) && isdigit((unsigned char)buf[0]))
        v = strtoull(buf, NULL, 10);
    fclose(f);
    return v;
}

/* See budget.h.  /proc/self/cgroup names the process's cgroup: "0::PATH"
 * (v2) or "N:...memory...:PATH" (v1); the limit is read there, else at
 * the mount's root (a container's namespace shows its own cgroup as the
 * root). */
uint64_t tl_mem_cgroup_limit(void)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    char line[1024], path[1200];
    uint64_t lim = UINT64_MAX;
    if (f) {
        while (fgets(line, sizeof line, f)) {
            char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
            if (!c2) continue;
            char *p = c2 + 1;
            p[strcspn(p, "\n")] = '\0';
            uint64_t v = UINT64_MAX;
            if (c2 == c1 + 1 && strncmp(line, "0:", 2) == 0) {
                snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", p);
                v = read_limit(path);
            } else {
                *c2 = '\0';
                if (!strstr(c1 + 1, "memory")) continue;
                snprintf(path, sizeof path, "/sys/fs/cgroup/memory%s/memory.limit_in_bytes", p);
                v = read_limit(path);
            }
            if (v < lim) lim = v;
        }
        fclose(f);
    }
    uint64_t v2 = read_limit("/sys/fs/cgroup/memory.max");
    uint64_t v1 = read_limit("/sys/fs/cgroup/memory/memory.limit_in_bytes");
    if (v2 < lim) lim = v2;
    if (v1 < lim) lim = v1;
    return lim;
}

/* See budget.h. */
uint64_t tl_budget_default(void)
{
    uint64_t m = tl_mem_physical(), c = tl_mem_cgroup_limit();
    if (c < m) m = c;
    return m / 5 * 4;
}

/* See budget.h. */
uint64_t tl_mem_resident_peak(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    uint64_t v = 0;
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) v = strtoull(line + 6, NULL, 10) * 1024;
    fclose(f);
    return v;
}
