/* faults.c -- injected runtime bugs for the kill matrix.
 *
 * MDLRI_EMU_FAULTS="name,name,..." is read once when the library is loaded (constructor).
 * The names are those of backends/sim/faults.py (EMULATOR_FAULTS); the Python side rejects
 * unknown ones before loading, an unknown name here is reported on stderr and ignored.
 * Each hook is an `if (emu_fault(F_...))` next to the behaviour it breaks. */
#include "emu.h"

static const char *const NAMES[F_COUNT] = {
    [F_CRASH_QUERY] = "crash-query",
    [F_HANG_QUERY_SYNC] = "hang-query-sync",
    [F_TIMEOUT_IGNORED] = "timeout-ignored",
    [F_EXECUTE_NULL_MODEL_107000] = "execute-null-model-107000",
    [F_EXECUTE_WHILE_UPDATING] = "execute-while-updating",
    [F_GETSTREAMS_ORIGIN_FIRST] = "getstreams-origin-first",
    [F_NO_107039] = "no-107039",
    [F_FAULT_NOT_STICKY] = "fault-not-sticky",
    [F_SETPARAMS_WITHOUT_UPDATE] = "setparams-without-update",
    [F_WRONG_THREAD_END_LEAKS_MODE] = "wrong-thread-end-leaks-mode",
    [F_WHOLE_KERNEL_PER_BLOCK] = "whole-kernel-per-block",
};

static unsigned g_faults;

__attribute__((constructor)) static void emu_read_faults(void) {
    const char *env = getenv("MDLRI_EMU_FAULTS");
    if (!env || !*env) return;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", env);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        int found = 0;
        for (int i = 0; i < F_COUNT; i++)
            if (strcmp(tok, NAMES[i]) == 0) {
                g_faults |= 1u << i;
                found = 1;
            }
        if (!found && *tok)
            fprintf(stderr, "mdlri-acl-emu: MDLRI_EMU_FAULTS: unknown fault '%s' ignored\n", tok);
    }
}

int emu_fault(int f) { return (g_faults >> f) & 1u; }
