/*
 * ts.h -- the TS core's internals: the device state (SQs, CQs, events, notifies) under one
 * lock, and the SQE fields it reads, by byte offset (../README.md, "SQEs").
 */
#ifndef MDLRI_HAL_TS_H
#define MDLRI_HAL_TS_H

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "mdlri_hal.h"

/* SQ ids are 11 bits in the cond ISA (the FSM select register, rtsqShamt 0x7FF,
 * 910_B_93/dev_info_reg.cc:236), and the runtime's SQ address array has rtsqDepth 2048 entries
 * (RawDevice::AllocMemForSqVirtualArr, raw_device.cc:1664-1667; 910_B_93/dev_info_reg.cc:257). The runtime's software-SQ pool alone may hold up to
 * RT_DEVICE_SQCQ_RES_MAX_NUM 1024 SQs, each with a CQ (device_sq_cq_pool.hpp:23): every capture
 * stream created pre-allocates one more (Stream::SetupWithoutBindSq, stream.cc:863-917,
 * DeviceSqCqPool::PreAllocSqCq, device_sq_cq_pool.cc:174-183) and the pool keeps them until
 * the device is released, on top of each stream's own SQ, CQ and logic CQ. */
#define TS_MAX_SQ 2048u
#define TS_MAX_CQ 4096u
#define TS_MAX_EVENT 65536u /* event ids are u16 in the SQE */
#define TS_MAX_NOTIFY 8192u /* notify_id is 13 bits */
#define TS_DEFAULT_DEPTH 1024u
#define TS_MAX_MODEL 1024u /* model ids (resources.c hands out 1024) */

/* the FSM select register the model-execute program reaches with physical addressing: on 910B
 * fsmSelBase = RT_STARS_BASE_ADDR 0x6A0000000 + STARS_SIMPLE_RTSQ_FSM_SEL_REG 0x4880
 * (src/runtime/config/910_B_93/dev_info_reg.cc:165,
 * src/runtime/core/inc/spec/base_info.hpp:74,114), chip 0, die 0, chip address 0 */
#define TS_FSM_SEL_PA 0x6A0004880ull
/* CSR AXI_USER (csr 0): the program clears these bits to address physically and sets them to
 * return to virtual addressing (stars_cond_isa_helper.cc:283-304) */
#define TS_AXI_USER_VA_MASK 0x100000001ull

/* SQE types (src/runtime/core/inc/sqe/v100/stars_sqe.hpp:24-46) */
enum {
    SQE_FFTS = 0,
    SQE_AICPU = 1,
    SQE_PLACE_HOLDER = 3,
    SQE_EVENT_RECORD = 4,
    SQE_EVENT_WAIT = 5,
    SQE_NOTIFY_RECORD = 6,
    SQE_NOTIFY_WAIT = 7,
    SQE_WRITE_VALUE = 8,
    SQE_SDMA = 11,
    SQE_PCIE_DMA = 17,
    SQE_COND = 20,
};

/* PLACE_HOLDER task_type values (src/runtime/core/inc/task/task_base.hpp:137,172,185) */
#define PH_TASK_MODEL_MAINTAINCE 12u
#define PH_TASK_MEM_WAIT_PROF 31u
#define PH_TASK_MEMCPY_WITHOUT_SDMA 90u
#define PH_TASK_NOP 103u
/* task_type 83 TS_TASK_TYPE_DEVICE_RINGBUFFER_CONTROL (ringbuffer_maintain_task_v100.cc:36) */
#define PH_TASK_RINGBUFFER_CONTROL 83u
/* the last TS_FEATURE_* (ACLGRAPH_COND_OP, src/runtime/core/inc/utils/capability.hpp:108) */
#define TS_FEATURE_LAST 51u

/* WRITE_VALUE sub types (src/runtime/core/inc/stars/stars_base.hpp:123-130) */
#define WV_SUB_DEFAULT 0u
#define WV_SUB_EVENT_RESET 1u

/* COND sub type of model execute (src/runtime/core/inc/stars/stars_base.hpp:94-95) */
#define CONDS_SUB_MODEL_EXEC 1u

/* model maintenance operations, PLACE_HOLDER task_type 12
 * (src/runtime/core/inc/task/task_base.hpp:236-245) */
enum {
    MMT_STREAM_ADD = 0,
    MMT_STREAM_DEL = 1,
    MMT_MODEL_LOAD_COMPLETE = 2,
    MMT_MODEL_DESTROY = 3,
    MMT_MODEL_PRE_PROC = 4,
    MMT_STREAM_LOAD_COMPLETE = 5,
    MMT_MODEL_ABORT = 6,
};

/* an aborted run's report on the executing SQ: errorType bit 5 (SW status,
 * src/runtime/core/inc/stars/stars.hpp:34-39) and an sq_sw_status whose 4-bit result (bits
 * 31:28 of rtStarsModelExecuteError_t, stars.hpp:59-63) is TS_STARS_MODEL_EXE_ABORT 3
 * (src/runtime/core/inc/runtime_tsch_defines.h:197), read as TS_ERROR_MODEL_ABORTED
 * (model_execute_task.cc:237-238) */
#define TS_CQE_ERR_SW_STATUS 0x20u
#define TS_MODEL_EXE_ABORT_STATUS (3u << 28)
/* TS_STARS_MODEL_STREAM_EXE_FAILED (runtime_tsch_defines.h:195) */
#define TS_MODEL_STREAM_EXE_FAILED 1u
/* TS_FEATURE_SOFTWARE_SQ_ENABLE (capability.hpp) */
#define TS_FEATURE_SOFTWARE_SQ 45u

static inline uint8_t sqe_u8(const uint8_t *s, unsigned off) { return s[off]; }
static inline uint16_t sqe_u16(const uint8_t *s, unsigned off) {
    uint16_t v;
    memcpy(&v, s + off, sizeof v);
    return v;
}
static inline uint32_t sqe_u32(const uint8_t *s, unsigned off) {
    uint32_t v;
    memcpy(&v, s + off, sizeof v);
    return v;
}
static inline uint64_t sqe_u64(const uint8_t *s, unsigned off) {
    uint64_t v;
    memcpy(&v, s + off, sizeof v);
    return v;
}

/* header (src/runtime/core/inc/task/task_info_base.hpp:42-57) */
static inline unsigned sqe_type(const uint8_t *s) { return s[0] & 0x3Fu; }
static inline unsigned sqe_wr_cqe(const uint8_t *s) { return (s[1] >> 6) & 1u; }
static inline uint16_t sqe_block_dim(const uint8_t *s) { return sqe_u16(s, 2); }
static inline uint16_t sqe_stream_id(const uint8_t *s) { return sqe_u16(s, 4); }
static inline uint16_t sqe_task_id(const uint8_t *s) { return sqe_u16(s, 6); }

/* our CQE, the 32-byte report the runtime reads (task_info_base.hpp:354-381) */
typedef struct {
    uint16_t stream_id;
    uint16_t task_id;
    uint32_t error_code;
    uint8_t error_type;
    uint8_t sqe_type;
    uint16_t sq_id;
    uint16_t sq_head;
    uint16_t flags;
    uint64_t timestamp;
    uint64_t reserved;
} ts_cqe;
_Static_assert(sizeof(ts_cqe) == MDLRI_HAL_CQE_SIZE, "CQE is 32 bytes");

typedef struct {
    int used;
    uint32_t depth;
    uint32_t head, tail; /* ring positions; entries [head, tail) are queued */
    uint32_t refs;       /* SQs reporting here */
    ts_cqe *ring;
} ts_cq;

typedef struct {
    int used;
    int stop;
    int paused; /* after an error, until halSqCqConfig sets SQ_STATUS 1 */
    uint32_t id, cq_id, stream_id, depth;
    uint32_t head, tail, queued;
    uint8_t *ring; /* depth * 64 bytes */
    int own_ring;  /* ring is the driver's (freed with the SQ); else the runtime's software-SQ
                    * memory named by halSqSwitchStreamBatch, or NULL (hal_swsq.c) */
    /* the SQ's simple registers, readable by cond ISA programs (halSqCqQuery SQ_REG_BASE),
     * at the offsets of src/runtime/core/inc/stars/stars_base_cond_isa_define.hpp:16-19:
     * tail at +0x8, head at +0x10, enable (bit 0) at +0x14; the rest reads 0 */
    volatile uint32_t regs[16];
    pthread_t thread;
    int thread_started;
    int busy;             /* running an SQE: the FSM state reads non-idle */
    int abort_req;        /* its model was aborted while it ran an SQE: cut that SQE short */
    uint32_t model_plus1; /* the model the SQ's stream is bound to, plus 1; 0: none */
    int cqe_reported;     /* a CQE since the last SQ_CQE_STATUS query (read clear) */
} ts_sq;

/* a model as the TS knows it: its end-graph notify (MMT_MODEL_PRE_PROC) and its run state */
typedef struct {
    int has_end;
    uint32_t end_notify;
    int running;  /* an execute is waiting for the end graph */
    uint32_t gen; /* +1 each time a run ends */
    uint8_t end_error_type;
    uint32_t end_error_code;
} ts_model;

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* broadcast on every state change */
    ts_sq sq[TS_MAX_SQ];
    ts_cq cq[TS_MAX_CQ];
    uint8_t event[TS_MAX_EVENT];
    uint8_t notify[TS_MAX_NOTIFY];
    /* set with notify[id] when a model's run ends other than by its end graph (MMT_MODEL_ABORT,
     * or an SQE of the model failed): the sq_sw_status the NOTIFY_WAIT that takes the
     * end-graph notify completes with (errorType SW status, ts_model.c); 0: none */
    uint32_t notify_status[TS_MAX_NOTIFY];
    /* end-graph records made while the notify was still set (two executes of one model in
     * flight): each is kept for one more NOTIFY_WAIT, so every execute's end-graph wait passes */
    uint8_t notify_extra[TS_MAX_NOTIFY];
    ts_model model[TS_MAX_MODEL];
    uint32_t fsm_sel; /* the SQ id last written to the FSM select register */
} ts_device;

extern ts_device g_ts;

/* ts_core.c */
int ts_cq_alloc(uint32_t want, uint32_t depth, uint32_t *out); /* lock held */
void ts_cq_release(uint32_t id);                              /* lock held */
int ts_sq_start(uint32_t sq_id);                              /* lock held */
void ts_sq_stop_and_join(uint32_t sq_id); /* lock held on entry and exit */
int ts_sq_stopping(ts_sq *sq);            /* takes the lock */
uint64_t ts_now_ns(void);

void ts_sq_set_head(ts_sq *sq, uint32_t head); /* lock held */
void ts_sq_publish(ts_sq *sq);                  /* lock held: head, tail, enable to regs */
void ts_models_reset(void);                     /* lock held */

/* cond.c: run a COND SQE's instructions (lock NOT held). 0 done; -1 a bad instruction or
 * address (an SQE error); 1 the SQ is stopping. A GOTO_I on the running SQ is left in fx. */
typedef struct {
    int has_goto;
    uint32_t goto_head;
} ts_cond_effect;
int ts_cond_run(ts_sq *sq, const uint8_t *sqe, ts_cond_effect *fx);

/* ts_model.c (lock held unless said) */
int ts_model_maintain(const uint8_t *sqe); /* 0 done; -1 an SQE error */
int ts_model_notify_recorded(uint32_t notify_id); /* 1: it ended a run */
void ts_model_sq_failed(const ts_sq *sq, const uint8_t *sqe, uint8_t error_type,
                        uint32_t error_code);
int ts_model_exec_begin(ts_sq *sq, uint32_t model, uint32_t *gen, int *was_running);
void ts_model_exec_abort(uint32_t model, int was_running);
int ts_model_exec_wait(ts_sq *sq, uint32_t model, uint32_t gen, uint8_t *error_type,
                       uint32_t *error_code);
void ts_fsm_select(uint64_t v); /* lock NOT held */
uint64_t ts_fsm_read(void);     /* lock NOT held */

/* resources.c */
void ts_resources_reset(void); /* lock held */

/* kernels.c: the registry */
typedef struct {
    mdlri_hal_kernel_fn fn;
    uint32_t args_size;
    mdlri_hal_kernel_check_fn ready, fault;
    mdlri_hal_kernel_spans_fn spans; /* NULL: not checked */
} ts_kernel;
int ts_kernel_lookup(uint64_t pc, const char *name, ts_kernel *out); /* name NULL: any */
void ts_kernel_forget_range(uint64_t base, uint64_t size); /* freed device memory */
/* kbin.c: the registry, else the virtual kernel binary's record at pc (bound on first use) */
int ts_kernel_find(uint64_t pc, ts_kernel *out);
int ts_kernel_record_name(uint64_t pc, char *name, size_t cap);

/* hal_mem.c: the size of the block halMemAlloc handed out at `base`; 0 if none starts there */
size_t mdlri_hal_mem_block_size(uint64_t base);
/* hal_mem.c: bytes from `addr` to the end of the device block holding it; 0 outside one */
size_t mdlri_hal_mem_room(uint64_t addr);

/* hal_sqcq.c (lock held): the SQ with this id, or NULL; route its reports to the logic CQ its
 * stream is bound to, else to its own CQ */
ts_sq *ts_sq_get(uint32_t id);
void ts_sq_route_reports(ts_sq *sq);

/* ts_caps.c: write the capability block a ring-buffer SQE asks for; 0 done, -1 bad SQE */
int ts_caps_ringbuffer(const uint8_t *s);
/* ts_caps.c (lock held): an element naming the failed SQE in the error ring buffer */
void ts_error_ring_put(const uint8_t *sqe, uint32_t sq_id, uint32_t sq_head);
void ts_error_ring_reset(void); /* lock held: no ring buffer handed over */
/* ts_caps.c: whether this TS reports TS feature bit `f` (MDLRI_HAL_FEATURES, _TS_FEATURES) */
int ts_feature_on(unsigned f);

#endif
