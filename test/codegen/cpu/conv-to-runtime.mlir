// RUN: strata-opt %s --split-input-file --strata-cpu-conv-to-runtime | FileCheck %s
// RUN: strata-opt %s --split-input-file --strata-cpu-conv-to-runtime="winograd=false" | FileCheck %s --check-prefix=OFF

// A channels-last convolution with its residual add and ReLU becomes one
// call of the runtime's kernel, placed where the ReLU was. Of the two
// convolutions added together, the later one (%d) takes the add: the
// earlier one's call (no epilogue) has made a fresh buffer that nothing
// reads after the add, and the later call writes its result over it (the
// same address as output and residual, fields 26 and 27). Weights are
// packed at compile time (2 panels of 32 columns over K * C rows: 36 rows,
// 2304 floats; 4 rows, 256 floats); input, weight and bias enter through
// read-only to_buffer views tagged per call; results are buffers of the
// dynamic batch.
// CHECK:       func.func private @strata_rt_conv_f32(index) attributes {strata.runtime_import}
// CHECK-LABEL: func.func @block
//       CHECK:   memref.alloca() : memref<28xi64>
//       CHECK:   %[[B:.+]] = strata.constant dense<2.500000e-01> : tensor<40xf32>
//       CHECK:   %[[W:.+]] = strata.constant dense_resource<{{.+}}> : tensor<2304xf32>
//       CHECK:   %[[OUT:.+]] = memref.alloc(%{{.+}}) : memref<?x5x5x40xf32>
//       CHECK:   bufferization.to_buffer %arg0 read_only {strata.runtime_call = 0 : i64}
//       CHECK:   bufferization.to_buffer %[[W]] read_only {strata.runtime_call = 0 : i64}
//       CHECK:   bufferization.to_buffer %[[B]] read_only {strata.runtime_call = 0 : i64}
//       CHECK:   call @strata_rt_conv_f32
//       CHECK:   %[[WD:.+]] = strata.constant dense_resource<{{.+}}> : tensor<256xf32>
//   CHECK-NOT:   memref.alloc
//       CHECK:   %[[P:.+]] = memref.extract_aligned_pointer_as_index %[[OUT]]
//       CHECK:   %[[A:.+]] = arith.addi %[[P]]
//       CHECK:   bufferization.to_buffer %arg0 read_only {strata.runtime_call = 1 : i64}
//       CHECK:   bufferization.to_buffer %[[WD]] read_only {strata.runtime_call = 1 : i64}
//   CHECK-NOT:   bufferization.to_buffer
//       CHECK:   %[[O:.+]] = arith.index_cast %[[A]] : index to i64
//  CHECK-NEXT:   %[[C26:.+]] = arith.constant 26 : index
//  CHECK-NEXT:   memref.store %[[O]], %{{.+}}[%[[C26]]]
//  CHECK-NEXT:   %[[R:.+]] = arith.index_cast %[[A]] : index to i64
//  CHECK-NEXT:   %[[C27:.+]] = arith.constant 27 : index
//  CHECK-NEXT:   memref.store %[[R]], %{{.+}}[%[[C27]]]
//       CHECK:   call @strata_rt_conv_f32
//       CHECK:   %[[RES:.+]] = bufferization.to_tensor %[[OUT]] restrict writable
//       CHECK:   return %[[RES]]
//   CHECK-NOT:   strata.conv
//   CHECK-NOT:   strata.relu
//   CHECK-NOT:   strata.add
func.func @block(%x: tensor<?x5x5x4xf32>) -> tensor<?x5x5x40xf32> {
  %w = strata.constant dense<0.5> : tensor<3x3x4x40xf32>
  %b = strata.constant dense<0.25> : tensor<40xf32>
  %wd = strata.constant dense<-0.5> : tensor<1x1x4x40xf32>
  %c = strata.conv %x, %w, %b {channels_last, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x5x5x4xf32>, tensor<3x3x4x40xf32>, tensor<40xf32>) -> tensor<?x5x5x40xf32>
  %d = strata.conv %x, %wd {channels_last, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x5x5x4xf32>, tensor<1x1x4x40xf32>) -> tensor<?x5x5x40xf32>
  %s = strata.add %c, %d : (tensor<?x5x5x40xf32>, tensor<?x5x5x40xf32>) -> tensor<?x5x5x40xf32>
  %r = strata.relu %s : tensor<?x5x5x40xf32>
  return %r : tensor<?x5x5x40xf32>
}

// -----

// Left to the generic lowering: an NCHW convolution, a weight that is no
// constant, and an input that is a view (a slice) rather than a buffer of
// its own.
// CHECK-LABEL: func.func @left_alone
//   CHECK-NOT:   call @strata_rt_conv_f32
//       CHECK:   strata.conv %arg0, %{{.+}} {dilations
//       CHECK:   strata.conv %arg0, %arg1 {channels_last
//       CHECK:   strata.conv %{{.+}}, %{{.+}} {channels_last
func.func @left_alone(%x: tensor<1x4x5x5xf32>, %w: tensor<1x1x5x8xf32>, %y: tensor<1x5x6x5xf32>) -> (tensor<1x8x5x5xf32>, tensor<1x4x5x8xf32>, tensor<1x5x5x8xf32>) {
  %wn = strata.constant dense<0.5> : tensor<8x4x1x1xf32>
  %wc = strata.constant dense<0.5> : tensor<1x1x5x8xf32>
  %a = strata.conv %x, %wn {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x5x5xf32>
  %b = strata.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<1x1x5x8xf32>) -> tensor<1x4x5x8xf32>
  %c0 = strata.constant dense<0> : tensor<1xi64>
  %c5 = strata.constant dense<5> : tensor<1xi64>
  %c1 = strata.constant dense<1> : tensor<1xi64>
  %s = strata.slice %y, %c0, %c5, %c1 {axes = array<i64: 2>} : (tensor<1x5x6x5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x5x5x5xf32>
  %c = strata.conv %s, %wc {channels_last, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x5x5x5xf32>, tensor<1x1x5x8xf32>) -> tensor<1x5x5x8xf32>
  return %a, %b, %c : tensor<1x8x5x5xf32>, tensor<1x4x5x8xf32>, tensor<1x5x5x8xf32>
}

// -----

// A residual that is read again after the add (returned here), or that is
// the function's argument, is not written over: the call gets a buffer of
// its own and reads the residual through a read-only view.
// CHECK-LABEL: func.func @residual_kept
//       CHECK:   call @strata_rt_conv_f32
//       CHECK:   %[[KEPT:.+]] = bufferization.to_tensor
//       CHECK:   memref.alloc() : memref<1x5x5x8xf32>
//       CHECK:   bufferization.to_buffer %[[KEPT]] read_only {strata.runtime_call = 1 : i64}
//       CHECK:   call @strata_rt_conv_f32
//       CHECK:   memref.alloc() : memref<1x5x5x8xf32>
//       CHECK:   bufferization.to_buffer %arg1 read_only {strata.runtime_call = 2 : i64}
//       CHECK:   call @strata_rt_conv_f32
func.func @residual_kept(%x: tensor<1x5x5x8xf32>, %y: tensor<1x5x5x8xf32>) -> (tensor<1x5x5x8xf32>, tensor<1x5x5x8xf32>, tensor<1x5x5x8xf32>) {
  %w = strata.constant dense<0.5> : tensor<1x1x8x8xf32>
  %a = strata.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x5x5x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x5x5x8xf32>
  %b = strata.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x5x5x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x5x5x8xf32>
  %s = strata.add %b, %a : (tensor<1x5x5x8xf32>, tensor<1x5x5x8xf32>) -> tensor<1x5x5x8xf32>
  %c = strata.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x5x5x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x5x5x8xf32>
  %t = strata.add %c, %y : (tensor<1x5x5x8xf32>, tensor<1x5x5x8xf32>) -> tensor<1x5x5x8xf32>
  return %s, %a, %t : tensor<1x5x5x8xf32>, tensor<1x5x5x8xf32>, tensor<1x5x5x8xf32>
}

// -----

// A 3x3 convolution with unit strides over 16 channels in and out and 10 x
// 10 outputs calls the Winograd import, its weight transformed at compile
// time: (16 points x 16 channels) rows of one 32-column panel, 8192
// floats. Strides of 2, a 7 x 7 output (too few tiles) and 8 channels
// keep the direct import; winograd=false keeps it everywhere.
// CHECK-LABEL: func.func @winograd
//       CHECK:   strata.constant dense_resource<{{.+}}> : tensor<8192xf32>
//       CHECK:   call @strata_rt_conv_f32_winograd
//   CHECK-NOT:   call @strata_rt_conv_f32_winograd
//       CHECK:   call @strata_rt_conv_f32(
//       CHECK:   call @strata_rt_conv_f32(
//       CHECK:   call @strata_rt_conv_f32(
// OFF-LABEL: func.func @winograd
//   OFF-NOT:   call @strata_rt_conv_f32_winograd
func.func @winograd(%x: tensor<?x10x10x16xf32>, %y: tensor<?x7x7x16xf32>, %z: tensor<?x10x10x8xf32>) -> (tensor<?x10x10x16xf32>, tensor<?x5x5x16xf32>, tensor<?x7x7x16xf32>, tensor<?x10x10x16xf32>) {
  %w = strata.constant dense<1.0> : tensor<3x3x16x16xf32>
  %w8 = strata.constant dense<1.0> : tensor<3x3x8x16xf32>
  %a = strata.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x10x10x16xf32>, tensor<3x3x16x16xf32>) -> tensor<?x10x10x16xf32>
  %s = strata.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x10x10x16xf32>, tensor<3x3x16x16xf32>) -> tensor<?x5x5x16xf32>
  %b = strata.conv %y, %w {channels_last, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x7x7x16xf32>, tensor<3x3x16x16xf32>) -> tensor<?x7x7x16xf32>
  %c = strata.conv %z, %w8 {channels_last, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x10x10x8xf32>, tensor<3x3x8x16xf32>) -> tensor<?x10x10x16xf32>
  return %a, %s, %b, %c : tensor<?x10x10x16xf32>, tensor<?x5x5x16xf32>, tensor<?x7x7x16xf32>, tensor<?x10x10x16xf32>
}
