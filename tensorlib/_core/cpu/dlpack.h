/* The DLPack exchange structures (https://dmlc.github.io/dlpack/latest/c_api.html), written
 * from the published specification: the ABI of DLPack 1.x (the versioned managed tensor) and
 * of the legacy 0.x managed tensor. Only what tensorlib's exporter and importer use. */
#ifndef TL_DLPACK_H
#define TL_DLPACK_H

#include <stdint.h>

/* the newest DLPack version whose ABI these declarations follow */
#define TL_DLPACK_MAJOR 1
#define TL_DLPACK_MINOR 0

/* device types (DLDeviceType) */
enum {
    TL_DL_CPU = 1,
    TL_DL_CUDA = 2,
    TL_DL_CUDA_HOST = 3,
    TL_DL_CUDA_MANAGED = 13
};

/* type codes (DLDataTypeCode) */
enum {
    TL_DL_INT = 0,
    TL_DL_UINT = 1,
    TL_DL_FLOAT = 2,
    TL_DL_OPAQUE = 3,
    TL_DL_BFLOAT = 4,
    TL_DL_COMPLEX = 5,
    TL_DL_BOOL = 6
};

/* bits of tl_dl_managed_versioned.flags */
#define TL_DL_FLAG_READ_ONLY ((uint64_t)1)
#define TL_DL_FLAG_IS_COPIED ((uint64_t)2)

typedef struct {
    uint32_t major;
    uint32_t minor;
} tl_dl_version;

typedef struct {
    int32_t device_type;      /* a C enum in the specification: int-sized on every ABI */
    int32_t device_id;
} tl_dl_device;

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} tl_dl_dtype;

typedef struct {
    void* data;
    tl_dl_device device;
    int32_t ndim;
    tl_dl_dtype dtype;
    int64_t* shape;
    int64_t* strides;         /* in elements; NULL means compact row-major */
    uint64_t byte_offset;
} tl_dl_tensor;

/* "dltensor" capsules (DLManagedTensor) */
typedef struct tl_dl_managed {
    tl_dl_tensor dl_tensor;
    void* manager_ctx;
    void (*deleter)(struct tl_dl_managed* self);
} tl_dl_managed;

/* "dltensor_versioned" capsules (DLManagedTensorVersioned) */
typedef struct tl_dl_managed_versioned {
    tl_dl_version version;
    void* manager_ctx;
    void (*deleter)(struct tl_dl_managed_versioned* self);
    uint64_t flags;
    tl_dl_tensor dl_tensor;
} tl_dl_managed_versioned;

#endif
