/* The seam between HPC Challenge's RandomAccess harness and the update
 * variants one job measures. HPCC's HPCC_MPIRandomAccess() (patched by
 * patches/harness.patch) sizes the table, initialises it, times the
 * update phase and runs HPCC's verification; it calls the hooks below,
 * which gups.c defines, for the table, the number of updates and the
 * update phase itself. The variants the other patches add (rma.patch,
 * xrdma.patch) find the table's window here and the two helpers that say
 * where a global table index lives (HPCC's own distribution, for any
 * number of processes). Include after <hpcc.h> and "RandomAccess.h". */
#ifndef HPCC_RA_VARIANT_H
#define HPCC_RA_VARIANT_H
#include <mpi.h>

/* The one-sided variants' table is the memory of this window
 * (MPI_Win_allocate), created by HPCC_RA_TableAlloc and freed by
 * HPCC_RA_TableFree; HPCC's own variant keeps HPCC's malloc. */
extern MPI_Win HPCC_TableWin;
/* The image of the XOR function the XRDMA variant ships (gups.c -i). */
extern const char *HPCC_XorImage;

u64Int *HPCC_RA_TableAlloc(s64Int words);
void HPCC_RA_TableFree(u64Int *table);
/* May lower the updates each process makes (tparams->ProcNumUpdates) and
 * the total the rate is computed from, as HPCC's RA_TIME_BOUND does. */
void HPCC_RA_Bound(HPCC_RandomAccess_tabparams_t *tparams, u64Int *NumUpdates);
/* The timed update phase of the variant being measured. */
void HPCC_RA_Update(HPCC_RandomAccess_tabparams_t tparams, int PowerofTwo);

/* The variants the patches add. */
void RMAAccumulateUpdate(HPCC_RandomAccess_tabparams_t tparams);
void RMABatchedUpdate(HPCC_RandomAccess_tabparams_t tparams);
void XrdmaRandomAccessUpdate(HPCC_RandomAccess_tabparams_t tparams);

/* The process that owns global table index ran & (TableSize-1): the
 * arithmetic of AnyNodesMPIRandomAccessUpdate, which for a power of two
 * reduces to the shift of Power2NodesMPIRandomAccessUpdate. */
static inline int
HPCC_RA_Owner(const HPCC_RandomAccess_tabparams_t *t, u64Int ran) {
  u64Int g = ran & (t->TableSize - 1);
  if ((t->NumProcs & (t->NumProcs - 1)) == 0)
    return (int)(g >> (t->logTableSize - t->logNumProcs));
  if (g < t->Top) return (int)(g / (t->MinLocalTableSize + 1));
  return (int)((g - t->Remainder) / t->MinLocalTableSize);
}

/* The first global index process pe owns (GlobalStartMyProc there). */
static inline u64Int
HPCC_RA_Start(const HPCC_RandomAccess_tabparams_t *t, int pe) {
  u64Int p = (u64Int)pe;
  return p < (u64Int)t->Remainder ? (t->MinLocalTableSize + 1) * p
                                  : t->MinLocalTableSize * p + t->Remainder;
}

#endif
