// A module with a state tensor: `accumulate` adds its input to the state
// `acc` (two sequence slots of four values) and returns the column sums;
// `scale` does not use the state (it gets an unused argument for it).
module {
  func.func @accumulate(%x: tensor<2x4xf32> {strata.name = "x"},
                        %acc: tensor<2x4xf32> {strata.state = "acc", strata.dims = ["slots", ""]})
      -> (tensor<1x4xf32> {strata.name = "total"}, tensor<2x4xf32> {strata.state = "acc"}) {
    %sum = strata.add %acc, %x : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %total = strata.reduce_sum %sum {axes = array<i64: 0>} : tensor<2x4xf32> -> tensor<1x4xf32>
    return %total, %sum : tensor<1x4xf32>, tensor<2x4xf32>
  }
  func.func @scale(%x: tensor<4xf32> {strata.name = "x"}) -> (tensor<4xf32> {strata.name = "y"}) {
    %y = strata.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %y : tensor<4xf32>
  }
}
