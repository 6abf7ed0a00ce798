/*
 * cuda_loader.h - the CUDA driver API and NVRTC, loaded with dlopen.
 *
 * libramp builds and its CPU half runs on machines with no CUDA toolkit, no
 * driver and no GPU, so it never includes cuda.h or nvrtc.h and never links
 * libcuda or libnvrtc. This header declares the few driver and NVRTC types,
 * enum values and entry points libramp uses (values copied from the CUDA 13
 * headers; they are ABI and do not change), and two tables of function
 * pointers filled at first use. Every call goes through RAMP_CU / RAMP_NVRTC,
 * which turn a failure into RAMP_ERR_CUDA / RAMP_ERR_COMPILE with the
 * driver's own error name and text, the call and file:line.
 *
 * Where a driver entry point has versioned variants we bind the versioned
 * symbol the CUDA 12/13 headers map the plain name to (cuMemAlloc_v2,
 * cuStreamBeginCapture_v2, ...), never the legacy one.
 */
#ifndef RAMP_CUDA_LOADER_H
#define RAMP_CUDA_LOADER_H

#include "internal.h"

#include <stddef.h>
#include <stdint.h>

/* ---- driver types (cuda.h) ---- */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUgraphNode_st *CUgraphNode;

/* Conditional graph nodes (cuda.h, CUDA 12.3+; the switch type 12.8+): a
 * node whose body graph n runs when a value set on the device (the
 * selection kernel's cudaGraphSetConditional) is n. Layouts are the
 * driver's: CUgraphNodeParams is 256 bytes, the union at byte 16. */
typedef unsigned long long CUgraphConditionalHandle;
#define RAMP_CU_GRAPH_NODE_TYPE_CONDITIONAL 13
#define RAMP_CU_GRAPH_COND_TYPE_SWITCH 2
#define RAMP_CU_GRAPH_COND_ASSIGN_DEFAULT 1
#define RAMP_CU_STREAM_CAPTURE_STATUS_ACTIVE 1
#define RAMP_CU_STREAM_SET_CAPTURE_DEPENDENCIES 1
typedef struct {
    unsigned char from_port, to_port, type, reserved[5];
} CUgraphEdgeData;
typedef struct {
    int type;
    int reserved0[3];
    union {
        long long reserved1[29];
        struct {
            CUgraphConditionalHandle handle;
            int type;          /* RAMP_CU_GRAPH_COND_TYPE_* */
            unsigned size;     /* bodies */
            CUgraph *bodies;   /* out: the driver's array of body graphs */
            CUcontext ctx;
        } conditional;
    } u;
    long long reserved2;
} CUgraphNodeParams;
_Static_assert(sizeof(CUgraphNodeParams) == 256, "CUgraphNodeParams layout");
_Static_assert(sizeof(CUgraphEdgeData) == 8, "CUgraphEdgeData layout");

/* cuLaunchKernelEx's configuration (cuda.h, CUDA 12.0+), for programmatic
 * dependent launch: the attribute id and the value layout are the driver's. */
#define RAMP_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION 4
#define RAMP_CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION 6
typedef struct {
    int id;
    char pad[4];
    union {
        char pad[64];
        int programmatic_stream_serialization_allowed;
        struct {
            unsigned x, y, z;
        } cluster_dim;
    } value;
} CUlaunchAttribute;
typedef struct {
    unsigned grid_x, grid_y, grid_z;
    unsigned block_x, block_y, block_z;
    unsigned smem;
    CUstream stream;
    CUlaunchAttribute *attrs;
    unsigned nattrs;
} CUlaunchConfig;
_Static_assert(sizeof(CUlaunchAttribute) == 72, "CUlaunchAttribute layout");
_Static_assert(sizeof(CUlaunchConfig) == 56, "CUlaunchConfig layout");

/* cuTensorMapEncodeTiled's types (cuda.h, CUDA 12.0+): a TMA descriptor is
 * 128 opaque bytes that the driver fills and a kernel takes by value as a
 * __grid_constant__ parameter (kernels/hopper.cuh's hop_tensormap). cuda.h
 * aligns it to 128 bytes; the driver needs at least 64. The enums are passed
 * as ints (C enums), with cuda.h's values. */
typedef struct {
    _Alignas(128) uint64_t opaque[16];
} CUtensorMap;
_Static_assert(sizeof(CUtensorMap) == 128, "CUtensorMap layout");
_Static_assert(_Alignof(CUtensorMap) == 128, "CUtensorMap alignment");
enum { /* CUtensorMapDataType */
    RAMP_CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
    RAMP_CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9
};
enum { RAMP_CU_TENSOR_MAP_INTERLEAVE_NONE = 0 };
enum { /* CUtensorMapSwizzle */
    RAMP_CU_TENSOR_MAP_SWIZZLE_NONE = 0,
    RAMP_CU_TENSOR_MAP_SWIZZLE_128B = 3
};
enum { /* CUtensorMapL2promotion */
    RAMP_CU_TENSOR_MAP_L2_PROMOTION_NONE = 0,
    RAMP_CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3
};
enum { RAMP_CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0 };

enum {
    RAMP_CUDA_SUCCESS = 0,
    RAMP_CUDA_ERROR_NOT_INITIALIZED = 3,
    RAMP_CUDA_ERROR_STUB_LIBRARY = 34,
    RAMP_CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
    RAMP_CUDA_ERROR_NO_DEVICE = 100,
    RAMP_CUDA_ERROR_INVALID_DEVICE = 101,
    RAMP_CUDA_ERROR_NOT_READY = 600
};

/* CUdevice_attribute values used by libramp. */
enum {
    RAMP_CU_ATTR_MAX_THREADS_PER_BLOCK = 1,
    RAMP_CU_ATTR_CLOCK_RATE = 13,
    RAMP_CU_ATTR_MULTIPROCESSOR_COUNT = 16,
    RAMP_CU_ATTR_MEMORY_CLOCK_RATE = 36,
    RAMP_CU_ATTR_L2_CACHE_SIZE = 38,
    RAMP_CU_ATTR_MAX_THREADS_PER_MULTIPROCESSOR = 39,
    RAMP_CU_ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
    RAMP_CU_ATTR_COMPUTE_CAPABILITY_MINOR = 76,
    RAMP_CU_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
    RAMP_CU_ATTR_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
    RAMP_CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
    RAMP_CU_ATTR_MAX_BLOCKS_PER_MULTIPROCESSOR = 106
};

/* CUfunction_attribute values. */
enum {
    RAMP_CU_FUNC_MAX_THREADS_PER_BLOCK = 0,
    RAMP_CU_FUNC_SHARED_SIZE_BYTES = 1,
    RAMP_CU_FUNC_LOCAL_SIZE_BYTES = 3,
    RAMP_CU_FUNC_NUM_REGS = 4,
    RAMP_CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    RAMP_CU_FUNC_PREFERRED_SHARED_MEMORY_CARVEOUT = 9,
    RAMP_CU_FUNC_REQUIRED_CLUSTER_WIDTH = 11,
    RAMP_CU_FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14
};

enum { RAMP_CU_STREAM_NON_BLOCKING = 1 };
enum { RAMP_CU_EVENT_DEFAULT = 0 };
enum { RAMP_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1 };

/* The driver entry points libramp calls. */
typedef struct {
    CUresult (*Init)(unsigned flags);
    CUresult (*DriverGetVersion)(int *version);
    CUresult (*GetErrorName)(CUresult e, const char **s);
    CUresult (*GetErrorString)(CUresult e, const char **s);
    CUresult (*DeviceGetCount)(int *count);
    CUresult (*DeviceGet)(CUdevice *dev, int ordinal);
    CUresult (*DeviceGetName)(char *name, int len, CUdevice dev);
    CUresult (*DeviceGetAttribute)(int *value, int attrib, CUdevice dev);
    CUresult (*DeviceTotalMem)(size_t *bytes, CUdevice dev);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
    CUresult (*DevicePrimaryCtxRelease)(CUdevice dev);
    CUresult (*CtxSetCurrent)(CUcontext ctx);
    CUresult (*CtxGetCurrent)(CUcontext *ctx);
    CUresult (*CtxSynchronize)(void);
    CUresult (*ModuleLoadData)(CUmodule *mod, const void *image);
    CUresult (*ModuleUnload)(CUmodule mod);
    CUresult (*ModuleGetFunction)(CUfunction *f, CUmodule mod, const char *name);
    CUresult (*FuncGetAttribute)(int *value, int attrib, CUfunction f);
    CUresult (*FuncSetAttribute)(CUfunction f, int attrib, int value);
    CUresult (*LaunchKernel)(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                             unsigned bx, unsigned by, unsigned bz,
                             unsigned smem, CUstream stream, void **params,
                             void **extra);
    /* optional (NULL on drivers before CUDA 12.0) */
    CUresult (*LaunchKernelEx)(const CUlaunchConfig *config, CUfunction f,
                               void **params, void **extra);
    /* optional (NULL before CUDA 11.8): resident clusters of a launch shape */
    CUresult (*OccupancyMaxActiveClusters)(int *clusters, CUfunction f,
                                           const CUlaunchConfig *config);
    /* optional (NULL on drivers before CUDA 12.0): a TMA descriptor */
    CUresult (*TensorMapEncodeTiled)(CUtensorMap *map, int data_type,
                                     uint32_t rank, void *global_address,
                                     const uint64_t *global_dim,
                                     const uint64_t *global_strides,
                                     const uint32_t *box_dim,
                                     const uint32_t *element_strides,
                                     int interleave, int swizzle,
                                     int l2_promotion, int oob_fill);
    CUresult (*MemAlloc)(CUdeviceptr *p, size_t bytes);
    CUresult (*MemFree)(CUdeviceptr p);
    CUresult (*MemGetInfo)(size_t *free_bytes, size_t *total_bytes);
    CUresult (*MemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes);
    CUresult (*MemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);
    CUresult (*MemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes,
                                CUstream s);
    CUresult (*MemcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes,
                                CUstream s);
    CUresult (*MemsetD32Async)(CUdeviceptr dst, unsigned value, size_t count,
                               CUstream s);
    CUresult (*StreamCreate)(CUstream *s, unsigned flags);
    CUresult (*StreamDestroy)(CUstream s);
    CUresult (*StreamSynchronize)(CUstream s);
    CUresult (*StreamBeginCapture)(CUstream s, int mode);
    CUresult (*StreamEndCapture)(CUstream s, CUgraph *graph);
    CUresult (*GraphInstantiateWithFlags)(CUgraphExec *exec, CUgraph graph,
                                          unsigned long long flags);
    CUresult (*GraphLaunch)(CUgraphExec exec, CUstream s);
    CUresult (*GraphExecDestroy)(CUgraphExec exec);
    CUresult (*GraphDestroy)(CUgraph graph);
    /* optional (NULL before CUDA 12.3): conditional nodes during a capture */
    CUresult (*StreamGetCaptureInfo)(CUstream s, int *status, unsigned long long *id,
                                     CUgraph *graph, const CUgraphNode **deps,
                                     const CUgraphEdgeData **edges, size_t *ndeps);
    CUresult (*StreamUpdateCaptureDependencies)(CUstream s, CUgraphNode *deps,
                                                const CUgraphEdgeData *edges,
                                                size_t ndeps, unsigned flags);
    CUresult (*StreamBeginCaptureToGraph)(CUstream s, CUgraph graph,
                                          const CUgraphNode *deps,
                                          const CUgraphEdgeData *edges, size_t ndeps,
                                          int mode);
    CUresult (*GraphAddNode)(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,
                             const CUgraphEdgeData *edges, size_t ndeps,
                             CUgraphNodeParams *params);
    CUresult (*GraphConditionalHandleCreate)(CUgraphConditionalHandle *h, CUgraph graph,
                                             CUcontext ctx, unsigned default_value,
                                             unsigned flags);
    CUresult (*EventCreate)(CUevent *e, unsigned flags);
    CUresult (*EventDestroy)(CUevent e);
    CUresult (*EventRecord)(CUevent e, CUstream s);
    CUresult (*EventSynchronize)(CUevent e);
    CUresult (*EventElapsedTime)(float *ms, CUevent start, CUevent end);
} ramp_cuda_api;

/* ---- NVRTC (nvrtc.h) ---- */
typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;

typedef struct {
    nvrtcResult (*Version)(int *major, int *minor);
    const char *(*GetErrorString)(nvrtcResult r);
    nvrtcResult (*CreateProgram)(nvrtcProgram *prog, const char *src,
                                 const char *name, int nheaders,
                                 const char *const *headers,
                                 const char *const *include_names);
    nvrtcResult (*DestroyProgram)(nvrtcProgram *prog);
    nvrtcResult (*CompileProgram)(nvrtcProgram prog, int nopts,
                                  const char *const *opts);
    nvrtcResult (*GetProgramLogSize)(nvrtcProgram prog, size_t *size);
    nvrtcResult (*GetProgramLog)(nvrtcProgram prog, char *log);
    nvrtcResult (*GetCUBINSize)(nvrtcProgram prog, size_t *size);
    nvrtcResult (*GetCUBIN)(nvrtcProgram prog, char *cubin);
    nvrtcResult (*GetPTXSize)(nvrtcProgram prog, size_t *size);
    nvrtcResult (*GetPTX)(nvrtcProgram prog, char *ptx);
    int major, minor; /* the loaded library's version */
} ramp_nvrtc_api;

/* Loads libcuda.so.1 (or $RAMP_CUDA_DRIVER) and calls cuInit(0) once per
 * process. RAMP_ERR_NO_GPU, with what was tried and why it failed, when there
 * is no driver or no device. */
ramp_status ramp_cuda_load(const ramp_cuda_api **out);

/* Loads NVRTC once per process: $RAMP_NVRTC_LIB, libnvrtc.so.13,
 * libnvrtc.so.12, libnvrtc.so, then $CUDA_HOME/lib64, /usr/local/cuda/lib64.
 * RAMP_ERR_NO_GPU (the status for "no CUDA driver, NVRTC or device") with the
 * paths tried when none loads. */
ramp_status ramp_nvrtc_load(const ramp_nvrtc_api **out);

/* Records "<call> failed: NAME (text)" and returns RAMP_ERR_CUDA. */
ramp_status ramp_cu_fail(CUresult r, const char *call, const char *file,
                         int line);
ramp_status ramp_nvrtc_fail(nvrtcResult r, const char *call, const char *file,
                            int line);

/* Driver error name, for messages built elsewhere ("CUDA_ERROR_..."). */
const char *ramp_cu_error_name(CUresult r);

#define RAMP_CU(call)                                                    \
    do {                                                                 \
        CUresult ramp_cu_r_ = (call);                                    \
        if (ramp_cu_r_ != RAMP_CUDA_SUCCESS)                             \
            return ramp_cu_fail(ramp_cu_r_, #call, __FILE__, __LINE__);  \
    } while (0)

#define RAMP_NVRTC(call)                                                 \
    do {                                                                 \
        nvrtcResult ramp_nv_r_ = (call);                                 \
        if (ramp_nv_r_ != 0)                                             \
            return ramp_nvrtc_fail(ramp_nv_r_, #call, __FILE__, __LINE__); \
    } while (0)

#endif /* RAMP_CUDA_LOADER_H */
