/*
 * cuda_loader.c - finds the CUDA driver and NVRTC at run time (dlopen) and
 * fills the function tables of cuda_loader.h.
 *
 * Each library is loaded once per process (pthread_once). A failure is
 * remembered with its message, so every later GPU entry point fails the same
 * clear way ("no CUDA driver: dlopen(libcuda.so.1): ...") instead of crashing
 * or retrying dlopen on every call. The libraries stay loaded until exit.
 */
#include "cuda_loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ramp_cuda_api cu_api;
static ramp_status cu_status = RAMP_ERR_INTERNAL;
static char cu_message[1024];
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

static ramp_nvrtc_api nv_api;
static ramp_status nv_status = RAMP_ERR_INTERNAL;
static char nv_message[2048];
static pthread_once_t nv_once = PTHREAD_ONCE_INIT;

/* dlsym into a function pointer without the object/function pointer cast
 * warning: POSIX guarantees the representation is the same. */
static int bind(void *lib, const char *name, void *slot) {
    void *p = dlsym(lib, name);
    if (!p) return 0;
    memcpy(slot, &p, sizeof p);
    return 1;
}

/* ---------------------------------------------------------------- driver */

static void cuda_load_once(void) {
    const char *env = getenv("RAMP_CUDA_DRIVER");
    const char *path = env && *env ? env : "libcuda.so.1";
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(cu_message, sizeof cu_message,
                 "no CUDA driver: dlopen(%s) failed: %s (a GPU and NVIDIA's "
                 "driver are needed for this call; set RAMP_CUDA_DRIVER to "
                 "the driver library's path if it is installed elsewhere)",
                 path, why ? why : "unknown error");
        cu_status = RAMP_ERR_NO_GPU;
        return;
    }
    /* Versioned names: what cuda.h maps the plain names to since CUDA 12. */
    struct { const char *name; void *slot; int optional; } syms[] = {
        {"cuInit", &cu_api.Init, 0},
        {"cuDriverGetVersion", &cu_api.DriverGetVersion, 0},
        {"cuGetErrorName", &cu_api.GetErrorName, 0},
        {"cuGetErrorString", &cu_api.GetErrorString, 0},
        {"cuDeviceGetCount", &cu_api.DeviceGetCount, 0},
        {"cuDeviceGet", &cu_api.DeviceGet, 0},
        {"cuDeviceGetName", &cu_api.DeviceGetName, 0},
        {"cuDeviceGetAttribute", &cu_api.DeviceGetAttribute, 0},
        {"cuDeviceTotalMem_v2", &cu_api.DeviceTotalMem, 0},
        {"cuDevicePrimaryCtxRetain", &cu_api.DevicePrimaryCtxRetain, 0},
        {"cuDevicePrimaryCtxRelease_v2", &cu_api.DevicePrimaryCtxRelease, 0},
        {"cuCtxSetCurrent", &cu_api.CtxSetCurrent, 0},
        {"cuCtxGetCurrent", &cu_api.CtxGetCurrent, 0},
        {"cuCtxSynchronize", &cu_api.CtxSynchronize, 0},
        {"cuModuleLoadData", &cu_api.ModuleLoadData, 0},
        {"cuModuleUnload", &cu_api.ModuleUnload, 0},
        {"cuModuleGetFunction", &cu_api.ModuleGetFunction, 0},
        {"cuFuncGetAttribute", &cu_api.FuncGetAttribute, 0},
        {"cuFuncSetAttribute", &cu_api.FuncSetAttribute, 0},
        {"cuLaunchKernel", &cu_api.LaunchKernel, 0},
        {"cuLaunchKernelEx", &cu_api.LaunchKernelEx, 1},
        {"cuOccupancyMaxActiveClusters", &cu_api.OccupancyMaxActiveClusters, 1},
        {"cuTensorMapEncodeTiled", &cu_api.TensorMapEncodeTiled, 1},
        {"cuMemAlloc_v2", &cu_api.MemAlloc, 0},
        {"cuMemFree_v2", &cu_api.MemFree, 0},
        {"cuMemGetInfo_v2", &cu_api.MemGetInfo, 0},
        {"cuMemcpyHtoD_v2", &cu_api.MemcpyHtoD, 0},
        {"cuMemcpyDtoH_v2", &cu_api.MemcpyDtoH, 0},
        {"cuMemcpyHtoDAsync_v2", &cu_api.MemcpyHtoDAsync, 0},
        {"cuMemcpyDtoHAsync_v2", &cu_api.MemcpyDtoHAsync, 0},
        {"cuMemsetD32Async", &cu_api.MemsetD32Async, 0},
        {"cuStreamCreate", &cu_api.StreamCreate, 0},
        {"cuStreamDestroy_v2", &cu_api.StreamDestroy, 0},
        {"cuStreamSynchronize", &cu_api.StreamSynchronize, 0},
        {"cuStreamBeginCapture_v2", &cu_api.StreamBeginCapture, 0},
        {"cuStreamEndCapture", &cu_api.StreamEndCapture, 0},
        {"cuGraphInstantiateWithFlags", &cu_api.GraphInstantiateWithFlags, 0},
        {"cuGraphLaunch", &cu_api.GraphLaunch, 0},
        {"cuGraphExecDestroy", &cu_api.GraphExecDestroy, 0},
        {"cuGraphDestroy", &cu_api.GraphDestroy, 0},
        {"cuStreamGetCaptureInfo_v3", &cu_api.StreamGetCaptureInfo, 1},
        {"cuStreamUpdateCaptureDependencies_v2", &cu_api.StreamUpdateCaptureDependencies, 1},
        {"cuStreamBeginCaptureToGraph", &cu_api.StreamBeginCaptureToGraph, 1},
        {"cuGraphAddNode_v2", &cu_api.GraphAddNode, 1},
        {"cuGraphConditionalHandleCreate", &cu_api.GraphConditionalHandleCreate, 1},
        {"cuEventCreate", &cu_api.EventCreate, 0},
        {"cuEventDestroy_v2", &cu_api.EventDestroy, 0},
        {"cuEventRecord", &cu_api.EventRecord, 0},
        {"cuEventSynchronize", &cu_api.EventSynchronize, 0},
        /* _v2 since 12.8; older drivers only have the plain one (same
         * signature), bound below if this is missing. */
        {"cuEventElapsedTime_v2", &cu_api.EventElapsedTime, 1},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        if (!bind(lib, syms[i].name, syms[i].slot) && !syms[i].optional) {
            snprintf(cu_message, sizeof cu_message,
                     "CUDA driver %s lacks %s: the driver is too old "
                     "(CUDA 12.0 or newer is needed)", path, syms[i].name);
            cu_status = RAMP_ERR_NO_GPU;
            return;
        }
    }
    if (!cu_api.EventElapsedTime &&
        !bind(lib, "cuEventElapsedTime", &cu_api.EventElapsedTime)) {
        snprintf(cu_message, sizeof cu_message,
                 "CUDA driver %s lacks cuEventElapsedTime", path);
        cu_status = RAMP_ERR_NO_GPU;
        return;
    }
    CUresult r = cu_api.Init(0);
    if (r != RAMP_CUDA_SUCCESS) {
        const char *name = NULL, *text = NULL;
        if (cu_api.GetErrorName(r, &name) != RAMP_CUDA_SUCCESS) name = NULL;
        if (cu_api.GetErrorString(r, &text) != RAMP_CUDA_SUCCESS) text = NULL;
        snprintf(cu_message, sizeof cu_message,
                 "no usable GPU: cuInit failed with %s (%s)%s",
                 name ? name : "unknown error", text ? text : "no text",
                 r == RAMP_CUDA_ERROR_STUB_LIBRARY
                     ? ": the CUDA toolkit's stub libcuda was loaded, not a "
                       "real driver"
                     : "");
        cu_status = RAMP_ERR_NO_GPU;
        return;
    }
    cu_status = RAMP_OK;
}

ramp_status ramp_cuda_load(const ramp_cuda_api **out) {
    pthread_once(&cu_once, cuda_load_once);
    if (cu_status != RAMP_OK)
        RAMP_FAIL(cu_status, "%s", cu_message);
    *out = &cu_api;
    return RAMP_OK;
}

const char *ramp_cu_error_name(CUresult r) {
    const char *name = NULL;
    if (cu_status != RAMP_OK || cu_api.GetErrorName(r, &name) != 0 || !name)
        return "CUDA_ERROR_UNKNOWN";
    return name;
}

ramp_status ramp_cu_fail(CUresult r, const char *call, const char *file,
                         int line) {
    const char *text = NULL;
    if (cu_status != RAMP_OK || cu_api.GetErrorString(r, &text) != 0 || !text)
        text = "no description";
    return ramp_set_error(RAMP_ERR_CUDA, file, line, "%s failed: %s (%d: %s)",
                          call, ramp_cu_error_name(r), r, text);
}

/* ----------------------------------------------------------------- NVRTC */

static void nvrtc_load_once(void) {
    char tried[1024] = "";
    char cand[8][512];
    int n = 0;
    const char *env = getenv("RAMP_NVRTC_LIB");
    if (env && *env) snprintf(cand[n++], sizeof cand[0], "%s", env);
    snprintf(cand[n++], sizeof cand[0], "libnvrtc.so.13");
    snprintf(cand[n++], sizeof cand[0], "libnvrtc.so.12");
    snprintf(cand[n++], sizeof cand[0], "libnvrtc.so");
    const char *home = getenv("CUDA_HOME");
    if (home && *home)
        snprintf(cand[n++], sizeof cand[0], "%s/lib64/libnvrtc.so", home);
    snprintf(cand[n++], sizeof cand[0], "/usr/local/cuda/lib64/libnvrtc.so");
    void *lib = NULL;
    const char *path = NULL;
    for (int i = 0; i < n && !lib; i++) {
        lib = dlopen(cand[i], RTLD_NOW | RTLD_LOCAL);
        if (lib) path = cand[i];
        else {
            size_t used = strlen(tried);
            snprintf(tried + used, sizeof tried - used, "%s%s", used ? ", " : "",
                     cand[i]);
        }
    }
    if (!lib) {
        snprintf(nv_message, sizeof nv_message,
                 "NVRTC not found (tried %s): install the CUDA toolkit's "
                 "NVRTC, or set RAMP_NVRTC_LIB or CUDA_HOME", tried);
        nv_status = RAMP_ERR_NO_GPU;
        return;
    }
    struct { const char *name; void *slot; } syms[] = {
        {"nvrtcVersion", &nv_api.Version},
        {"nvrtcGetErrorString", &nv_api.GetErrorString},
        {"nvrtcCreateProgram", &nv_api.CreateProgram},
        {"nvrtcDestroyProgram", &nv_api.DestroyProgram},
        {"nvrtcCompileProgram", &nv_api.CompileProgram},
        {"nvrtcGetProgramLogSize", &nv_api.GetProgramLogSize},
        {"nvrtcGetProgramLog", &nv_api.GetProgramLog},
        {"nvrtcGetCUBINSize", &nv_api.GetCUBINSize},
        {"nvrtcGetCUBIN", &nv_api.GetCUBIN},
        {"nvrtcGetPTXSize", &nv_api.GetPTXSize},
        {"nvrtcGetPTX", &nv_api.GetPTX},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        if (!bind(lib, syms[i].name, syms[i].slot)) {
            snprintf(nv_message, sizeof nv_message,
                     "NVRTC %s lacks %s (CUDA 11.1 or newer is needed)", path,
                     syms[i].name);
            nv_status = RAMP_ERR_NO_GPU;
            return;
        }
    }
    if (nv_api.Version(&nv_api.major, &nv_api.minor) != 0) {
        snprintf(nv_message, sizeof nv_message, "nvrtcVersion failed (%s)",
                 path);
        nv_status = RAMP_ERR_NO_GPU;
        return;
    }
    nv_status = RAMP_OK;
}

ramp_status ramp_nvrtc_load(const ramp_nvrtc_api **out) {
    pthread_once(&nv_once, nvrtc_load_once);
    if (nv_status != RAMP_OK)
        RAMP_FAIL(nv_status, "%s", nv_message);
    *out = &nv_api;
    return RAMP_OK;
}

ramp_status ramp_nvrtc_fail(nvrtcResult r, const char *call, const char *file,
                            int line) {
    const char *text = nv_status == RAMP_OK ? nv_api.GetErrorString(r) : NULL;
    return ramp_set_error(RAMP_ERR_COMPILE, file, line, "%s failed: %s (%d)",
                          call, text ? text : "NVRTC error", r);
}
