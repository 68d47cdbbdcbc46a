// SmallVector against std::vector: the same operations give the same contents, inline and past
// the inline capacity, for a trivially copyable element and for one with a reference count.
#include "support/small_vector.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

namespace tessel {
namespace support {
namespace {

template <typename T, size_t N>
std::vector<T> Contents(const SmallVector<T, N>& v) {
  return std::vector<T>(v.begin(), v.end());
}

TEST(SmallVector, StaysInlineUpToN) {
  SmallVector<int, 3> v;
  v.push_back(1);
  v.push_back(2);
  v.push_back(3);
  EXPECT_EQ(v.capacity(), 3u);
  v.push_back(4);  // moves to the heap
  EXPECT_GE(v.capacity(), 4u);
  EXPECT_EQ(Contents(v), (std::vector<int>{1, 2, 3, 4}));
}

TEST(SmallVector, PushBackOfOwnElementWhileGrowing) {
  SmallVector<std::string, 2> v{"a", "b"};
  v.push_back(v[0]);  // growing must not invalidate the argument first
  EXPECT_EQ(Contents(v), (std::vector<std::string>{"a", "b", "a"}));
}

TEST(SmallVector, CopyMoveAndCompare) {
  SmallVector<std::string, 2> a{"x", "y", "z"};  // heap
  SmallVector<std::string, 2> b{"p"};            // inline
  SmallVector<std::string, 2> a2 = a, b2 = b;
  EXPECT_TRUE(a2 == a);
  EXPECT_TRUE(b2 == b);
  EXPECT_TRUE(a != b);
  SmallVector<std::string, 2> moved_a = std::move(a2), moved_b = std::move(b2);
  EXPECT_TRUE(moved_a == a);
  EXPECT_TRUE(moved_b == b);
  EXPECT_TRUE(a2.empty());
  EXPECT_TRUE(b2.empty());
  moved_a = b;  // heap <- inline copy
  EXPECT_TRUE(moved_a == b);
  moved_b = std::move(a);  // inline <- heap move
  EXPECT_EQ(Contents(moved_b), (std::vector<std::string>{"x", "y", "z"}));
}

// Random insert/erase/push/clear sequences, checked against std::vector; shared_ptr elements
// check that every element is destroyed exactly once (use_count returns to 1).
TEST(SmallVector, RandomOperationsMatchStdVector) {
  std::mt19937 rng(7);
  auto token = std::make_shared<int>(0);
  for (int round = 0; round < 200; ++round) {
    SmallVector<std::shared_ptr<int>, 3> v;
    std::vector<std::shared_ptr<int>> ref;
    for (int step = 0; step < 40; ++step) {
      int op = static_cast<int>(rng() % 5);
      if (op <= 1) {
        v.push_back(token);
        ref.push_back(token);
      } else if (op == 2) {
        size_t at = ref.empty() ? 0 : rng() % (ref.size() + 1);
        auto fresh = std::make_shared<int>(step);
        v.insert(v.begin() + at, fresh);
        ref.insert(ref.begin() + at, fresh);
      } else if (op == 3 && !ref.empty()) {
        size_t at = rng() % ref.size();
        v.erase(v.begin() + at);
        ref.erase(ref.begin() + at);
      } else if (op == 4 && rng() % 8 == 0) {
        v.clear();
        ref.clear();
      }
      ASSERT_EQ(Contents(v), ref) << "round " << round << " step " << step;
    }
  }
  EXPECT_EQ(token.use_count(), 1);
}

// Trivially copyable elements take the byte-copy paths (copy, growth, move from inline storage).
TEST(SmallVector, TrivialElementsCopyAndMoveAsBytes) {
  std::mt19937 rng(3);
  for (int round = 0; round < 200; ++round) {
    SmallVector<int64_t, 3> v;
    std::vector<int64_t> ref;
    int n = static_cast<int>(rng() % 9);
    for (int i = 0; i < n; ++i) {
      int64_t x = static_cast<int64_t>(rng());
      v.push_back(x);
      ref.push_back(x);
    }
    SmallVector<int64_t, 3> copy = v;
    ASSERT_EQ(Contents(copy), ref);
    SmallVector<int64_t, 3> assigned;
    assigned.push_back(-1);
    assigned = v;
    ASSERT_EQ(Contents(assigned), ref);
    SmallVector<int64_t, 3> moved = std::move(copy);
    ASSERT_EQ(Contents(moved), ref);
    EXPECT_TRUE(copy.empty());
    if (!ref.empty()) {
      moved.erase(moved.begin());
      ref.erase(ref.begin());
      ASSERT_EQ(Contents(moved), ref);
    }
  }
}

}  // namespace
}  // namespace support
}  // namespace tessel
