/*===- strata_x86_features.h - The x86-64 features a target names -*- C -*-===//
 * SPDX-License-Identifier: Apache-2.0
 * Every x86-64 ISA extension a CPU target descriptor may name, in LLVM's
 * spelling, with where CPUID reports it. The compiler records each one its
 * target machine enables; the runtime detects each one on the host. The
 * x86-64 baseline (sse, sse2, cmov, cx8, fxsr, mmx, x87) is implied by the
 * architecture and never listed. An extension LLVM knows but this table
 * lacks (avx10.2, the leaf-0x1E AMX ones) is not recorded: add it here
 * before the back end may target it. Plain C, no includes.
 *===----------------------------------------------------------------------===*/

#ifndef STRATA_CODEGEN_ABI_STRATA_X86_FEATURES_H_
#define STRATA_CODEGEN_ABI_STRATA_X86_FEATURES_H_

/* CPUID output registers. */
#define STRATA_CPUID_EAX 0
#define STRATA_CPUID_EBX 1
#define STRATA_CPUID_ECX 2
#define STRATA_CPUID_EDX 3

/* XCR0 bits the operating system must enable before the registers of a
 * feature may be used. */
#define STRATA_XSTATE_NONE 0x0u
#define STRATA_XSTATE_AVX 0x6u        /* XMM, YMM */
#define STRATA_XSTATE_AVX512 0xE6u    /* XMM, YMM, opmask, ZMM */
#define STRATA_XSTATE_AMX 0x60000u    /* tile config, tile data */
#define STRATA_XSTATE_APX 0x80000u    /* extended general registers */

/* X(name, cpuid leaf, subleaf, register, bit, xstate, legacy bit):
 * legacy bit is the STRATA_CPU_FEATURE_* value of the feature, 0 if none.
 * Names are only ever added; sorted by leaf, register, bit. */
#define STRATA_X86_FEATURES(X)                                               \
  X("sse3", 0x1u, 0u, STRATA_CPUID_ECX, 0, STRATA_XSTATE_NONE, 0)            \
  X("pclmul", 0x1u, 0u, STRATA_CPUID_ECX, 1, STRATA_XSTATE_NONE, 0)          \
  X("ssse3", 0x1u, 0u, STRATA_CPUID_ECX, 9, STRATA_XSTATE_NONE, 0)           \
  X("fma", 0x1u, 0u, STRATA_CPUID_ECX, 12, STRATA_XSTATE_AVX, 1ull << 1)     \
  X("cx16", 0x1u, 0u, STRATA_CPUID_ECX, 13, STRATA_XSTATE_NONE, 0)           \
  X("sse4.1", 0x1u, 0u, STRATA_CPUID_ECX, 19, STRATA_XSTATE_NONE, 0)         \
  X("sse4.2", 0x1u, 0u, STRATA_CPUID_ECX, 20, STRATA_XSTATE_NONE, 0)         \
  X("crc32", 0x1u, 0u, STRATA_CPUID_ECX, 20, STRATA_XSTATE_NONE, 0)          \
  X("movbe", 0x1u, 0u, STRATA_CPUID_ECX, 22, STRATA_XSTATE_NONE, 0)          \
  X("popcnt", 0x1u, 0u, STRATA_CPUID_ECX, 23, STRATA_XSTATE_NONE, 0)         \
  X("aes", 0x1u, 0u, STRATA_CPUID_ECX, 25, STRATA_XSTATE_NONE, 0)            \
  X("xsave", 0x1u, 0u, STRATA_CPUID_ECX, 26, STRATA_XSTATE_NONE, 0)          \
  X("avx", 0x1u, 0u, STRATA_CPUID_ECX, 28, STRATA_XSTATE_AVX, 0)             \
  X("f16c", 0x1u, 0u, STRATA_CPUID_ECX, 29, STRATA_XSTATE_AVX, 1ull << 8)    \
  X("rdrnd", 0x1u, 0u, STRATA_CPUID_ECX, 30, STRATA_XSTATE_NONE, 0)          \
  X("fsgsbase", 0x7u, 0u, STRATA_CPUID_EBX, 0, STRATA_XSTATE_NONE, 0)        \
  X("bmi", 0x7u, 0u, STRATA_CPUID_EBX, 3, STRATA_XSTATE_NONE, 0)             \
  X("avx2", 0x7u, 0u, STRATA_CPUID_EBX, 5, STRATA_XSTATE_AVX, 1ull << 0)     \
  X("bmi2", 0x7u, 0u, STRATA_CPUID_EBX, 8, STRATA_XSTATE_NONE, 0)            \
  X("invpcid", 0x7u, 0u, STRATA_CPUID_EBX, 10, STRATA_XSTATE_NONE, 0)        \
  X("rtm", 0x7u, 0u, STRATA_CPUID_EBX, 11, STRATA_XSTATE_NONE, 0)            \
  X("avx512f", 0x7u, 0u, STRATA_CPUID_EBX, 16,                               \
    STRATA_XSTATE_AVX512, \
    1ull << 2)                                   \
  X("avx512dq", 0x7u, 0u, STRATA_CPUID_EBX, 17,                              \
    STRATA_XSTATE_AVX512, \
    1ull << 5)                                   \
  X("rdseed", 0x7u, 0u, STRATA_CPUID_EBX, 18, STRATA_XSTATE_NONE, 0)         \
  X("adx", 0x7u, 0u, STRATA_CPUID_EBX, 19, STRATA_XSTATE_NONE, 0)            \
  X("avx512ifma", 0x7u, 0u, STRATA_CPUID_EBX, 21, STRATA_XSTATE_AVX512, 0)   \
  X("clflushopt", 0x7u, 0u, STRATA_CPUID_EBX, 23, STRATA_XSTATE_NONE, 0)     \
  X("clwb", 0x7u, 0u, STRATA_CPUID_EBX, 24, STRATA_XSTATE_NONE, 0)           \
  X("avx512cd", 0x7u, 0u, STRATA_CPUID_EBX, 28, STRATA_XSTATE_AVX512, 0)     \
  X("sha", 0x7u, 0u, STRATA_CPUID_EBX, 29, STRATA_XSTATE_NONE, 0)            \
  X("avx512bw", 0x7u, 0u, STRATA_CPUID_EBX, 30,                              \
    STRATA_XSTATE_AVX512, \
    1ull << 3)                                   \
  X("avx512vl", 0x7u, 0u, STRATA_CPUID_EBX, 31,                              \
    STRATA_XSTATE_AVX512, \
    1ull << 4)                                   \
  X("avx512vbmi", 0x7u, 0u, STRATA_CPUID_ECX, 1, STRATA_XSTATE_AVX512, 0)    \
  X("waitpkg", 0x7u, 0u, STRATA_CPUID_ECX, 5, STRATA_XSTATE_NONE, 0)         \
  X("avx512vbmi2", 0x7u, 0u, STRATA_CPUID_ECX, 6, STRATA_XSTATE_AVX512, 0)   \
  X("gfni", 0x7u, 0u, STRATA_CPUID_ECX, 8, STRATA_XSTATE_NONE, 0)            \
  X("vaes", 0x7u, 0u, STRATA_CPUID_ECX, 9, STRATA_XSTATE_AVX, 0)             \
  X("vpclmulqdq", 0x7u, 0u, STRATA_CPUID_ECX, 10, STRATA_XSTATE_AVX, 0)      \
  X("avx512vnni", 0x7u, 0u, STRATA_CPUID_ECX, 11,                            \
    STRATA_XSTATE_AVX512, \
    1ull << 6)                                   \
  X("avx512bitalg", 0x7u, 0u, STRATA_CPUID_ECX, 12,                          \
    STRATA_XSTATE_AVX512, \
    0)                                           \
  X("avx512vpopcntdq", 0x7u, 0u, STRATA_CPUID_ECX, 14,                       \
    \
    STRATA_XSTATE_AVX512, 0)                                           \
  X("rdpid", 0x7u, 0u, STRATA_CPUID_ECX, 22, STRATA_XSTATE_NONE, 0)          \
  X("cldemote", 0x7u, 0u, STRATA_CPUID_ECX, 25, STRATA_XSTATE_NONE, 0)       \
  X("movdiri", 0x7u, 0u, STRATA_CPUID_ECX, 27, STRATA_XSTATE_NONE, 0)        \
  X("movdir64b", 0x7u, 0u, STRATA_CPUID_ECX, 28, STRATA_XSTATE_NONE, 0)      \
  X("enqcmd", 0x7u, 0u, STRATA_CPUID_ECX, 29, STRATA_XSTATE_NONE, 0)         \
  X("uintr", 0x7u, 0u, STRATA_CPUID_EDX, 5, STRATA_XSTATE_NONE, 0)           \
  X("avx512vp2intersect", 0x7u, 0u, STRATA_CPUID_EDX, 8,                     \
    \
    STRATA_XSTATE_AVX512, 0)                                           \
  X("serialize", 0x7u, 0u, STRATA_CPUID_EDX, 14, STRATA_XSTATE_NONE, 0)      \
  X("tsxldtrk", 0x7u, 0u, STRATA_CPUID_EDX, 16, STRATA_XSTATE_NONE, 0)       \
  X("amx-bf16", 0x7u, 0u, STRATA_CPUID_EDX, 22, STRATA_XSTATE_AMX, 0)        \
  X("avx512fp16", 0x7u, 0u, STRATA_CPUID_EDX, 23, STRATA_XSTATE_AVX512, 0)   \
  X("amx-tile", 0x7u, 0u, STRATA_CPUID_EDX, 24, STRATA_XSTATE_AMX, 0)        \
  X("amx-int8", 0x7u, 0u, STRATA_CPUID_EDX, 25, STRATA_XSTATE_AMX, 0)        \
  X("sha512", 0x7u, 1u, STRATA_CPUID_EAX, 0, STRATA_XSTATE_NONE, 0)          \
  X("sm3", 0x7u, 1u, STRATA_CPUID_EAX, 1, STRATA_XSTATE_NONE, 0)             \
  X("sm4", 0x7u, 1u, STRATA_CPUID_EAX, 2, STRATA_XSTATE_NONE, 0)             \
  X("raoint", 0x7u, 1u, STRATA_CPUID_EAX, 3, STRATA_XSTATE_NONE, 0)          \
  X("avxvnni", 0x7u, 1u, STRATA_CPUID_EAX, 4, STRATA_XSTATE_AVX, 0)          \
  X("avx512bf16", 0x7u, 1u, STRATA_CPUID_EAX, 5,                             \
    STRATA_XSTATE_AVX512, \
    1ull << 7)                                   \
  X("cmpccxadd", 0x7u, 1u, STRATA_CPUID_EAX, 7, STRATA_XSTATE_NONE, 0)       \
  X("amx-fp16", 0x7u, 1u, STRATA_CPUID_EAX, 21, STRATA_XSTATE_AMX, 0)        \
  X("avxifma", 0x7u, 1u, STRATA_CPUID_EAX, 23, STRATA_XSTATE_AVX, 0)         \
  X("hreset", 0x7u, 1u, STRATA_CPUID_EAX, 22, STRATA_XSTATE_NONE, 0)         \
  X("movrs", 0x7u, 1u, STRATA_CPUID_EAX, 31, STRATA_XSTATE_NONE, 0)          \
  X("avxvnniint8", 0x7u, 1u, STRATA_CPUID_EDX, 4, STRATA_XSTATE_AVX, 0)      \
  X("avxneconvert", 0x7u, 1u, STRATA_CPUID_EDX, 5, STRATA_XSTATE_AVX, 0)     \
  X("amx-complex", 0x7u, 1u, STRATA_CPUID_EDX, 8, STRATA_XSTATE_AMX, 0)      \
  X("avxvnniint16", 0x7u, 1u, STRATA_CPUID_EDX, 10, STRATA_XSTATE_AVX, 0)    \
  X("prefetchi", 0x7u, 1u, STRATA_CPUID_EDX, 14, STRATA_XSTATE_NONE, 0)      \
  X("usermsr", 0x7u, 1u, STRATA_CPUID_EDX, 15, STRATA_XSTATE_NONE, 0)        \
  X("avx10.1", 0x7u, 1u, STRATA_CPUID_EDX, 19, STRATA_XSTATE_AVX512, 0)      \
  X("avx10.1-512", 0x7u, 1u, STRATA_CPUID_EDX, 19, STRATA_XSTATE_AVX512, 0)  \
  X("egpr", 0x7u, 1u, STRATA_CPUID_EDX, 21, STRATA_XSTATE_APX, 0)            \
  X("push2pop2", 0x7u, 1u, STRATA_CPUID_EDX, 21, STRATA_XSTATE_APX, 0)       \
  X("ppx", 0x7u, 1u, STRATA_CPUID_EDX, 21, STRATA_XSTATE_APX, 0)             \
  X("ndd", 0x7u, 1u, STRATA_CPUID_EDX, 21, STRATA_XSTATE_APX, 0)             \
  X("ccmp", 0x7u, 1u, STRATA_CPUID_EDX, 21, STRATA_XSTATE_APX, 0)            \
  X("nf", 0x7u, 1u, STRATA_CPUID_EDX, 21, STRATA_XSTATE_APX, 0)              \
  X("cf", 0x7u, 1u, STRATA_CPUID_EDX, 21, STRATA_XSTATE_APX, 0)              \
  X("zu", 0x7u, 1u, STRATA_CPUID_EDX, 21, STRATA_XSTATE_APX, 0)              \
  X("xsaveopt", 0xDu, 1u, STRATA_CPUID_EAX, 0, STRATA_XSTATE_NONE, 0)        \
  X("xsavec", 0xDu, 1u, STRATA_CPUID_EAX, 1, STRATA_XSTATE_NONE, 0)          \
  X("xsaves", 0xDu, 1u, STRATA_CPUID_EAX, 3, STRATA_XSTATE_NONE, 0)          \
  X("ptwrite", 0x14u, 0u, STRATA_CPUID_EBX, 4, STRATA_XSTATE_NONE, 0)        \
  X("sahf", 0x80000001u, 0u, STRATA_CPUID_ECX, 0, STRATA_XSTATE_NONE, 0)     \
  X("lzcnt", 0x80000001u, 0u, STRATA_CPUID_ECX, 5, STRATA_XSTATE_NONE, 0)    \
  X("sse4a", 0x80000001u, 0u, STRATA_CPUID_ECX, 6, STRATA_XSTATE_NONE, 0)    \
  X("prfchw", 0x80000001u, 0u, STRATA_CPUID_ECX, 8, STRATA_XSTATE_NONE, 0)   \
  X("xop", 0x80000001u, 0u, STRATA_CPUID_ECX, 11, STRATA_XSTATE_AVX, 0)      \
  X("lwp", 0x80000001u, 0u, STRATA_CPUID_ECX, 15, STRATA_XSTATE_NONE, 0)     \
  X("fma4", 0x80000001u, 0u, STRATA_CPUID_ECX, 16, STRATA_XSTATE_AVX, 0)     \
  X("tbm", 0x80000001u, 0u, STRATA_CPUID_ECX, 21, STRATA_XSTATE_NONE, 0)     \
  X("mwaitx", 0x80000001u, 0u, STRATA_CPUID_ECX, 29, STRATA_XSTATE_NONE, 0)  \
  X("clzero", 0x80000008u, 0u, STRATA_CPUID_EBX, 0, STRATA_XSTATE_NONE, 0)   \
  X("rdpru", 0x80000008u, 0u, STRATA_CPUID_EBX, 4, STRATA_XSTATE_NONE, 0)    \
  X("wbnoinvd", 0x80000008u, 0u, STRATA_CPUID_EBX, 9, STRATA_XSTATE_NONE, 0)

#endif /* STRATA_CODEGEN_ABI_STRATA_X86_FEATURES_H_ */
