// A vector that keeps its first N elements inside itself and moves to the heap only past N.
// The analyzer builds many short-lived sums of two or three terms per query; with std::vector each
// of them was a malloc/free pair, about half of the allocations of a Simplify call.
//
// Only what the analyzer uses: push_back/emplace_back, insert and erase of one element, indexing,
// iteration, reserve, clear, equality. Iterators and pointers are invalidated by any insertion
// (as with std::vector) and also by moving the vector (the inline storage moves with it).
#ifndef TESSEL_SRC_SUPPORT_SMALL_VECTOR_H_
#define TESSEL_SRC_SUPPORT_SMALL_VECTOR_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace tessel {
namespace support {

template <typename T, size_t N>
class SmallVector {
  static_assert(N > 0, "SmallVector needs inline room for at least one element");

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() = default;
  SmallVector(std::initializer_list<T> init) {
    reserve(init.size());
    for (const T& v : init) push_back(v);
  }
  SmallVector(const SmallVector& other) { CopyFrom(other); }
  SmallVector(SmallVector&& other) noexcept(std::is_nothrow_move_constructible_v<T>) {
    MoveFrom(std::move(other));
  }
  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) {
      clear();
      CopyFrom(other);
    }
    return *this;
  }
  SmallVector& operator=(SmallVector&& other) noexcept(std::is_nothrow_move_constructible_v<T>) {
    if (this != &other) {
      clear();
      FreeHeap();
      MoveFrom(std::move(other));
    }
    return *this;
  }
  ~SmallVector() {
    clear();
    FreeHeap();
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }
  iterator begin() { return data_; }
  iterator end() { return data_ + size_; }
  const_iterator begin() const { return data_; }
  const_iterator end() const { return data_ + size_; }

  void reserve(size_t n) {
    if (n > capacity_) Grow(n);
  }
  void clear() {
    std::destroy(data_, data_ + size_);
    size_ = 0;
  }

  void push_back(const T& v) { emplace_back(v); }
  void push_back(T&& v) { emplace_back(std::move(v)); }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == capacity_) {
      // Constructed first: args may refer to an element that growing would move.
      T tmp(std::forward<Args>(args)...);
      Grow(capacity_ * 2);
      ::new (static_cast<void*>(data_ + size_)) T(std::move(tmp));
    } else {
      ::new (static_cast<void*>(data_ + size_)) T(std::forward<Args>(args)...);
    }
    return data_[size_++];
  }

  iterator insert(const_iterator pos, T v) {
    size_t at = static_cast<size_t>(pos - data_);
    emplace_back(std::move(v));
    // Rotate the new last element down to `at`.
    for (size_t i = size_ - 1; i > at; --i) std::swap(data_[i], data_[i - 1]);
    return data_ + at;
  }
  iterator erase(const_iterator pos) {
    size_t at = static_cast<size_t>(pos - data_);
    for (size_t i = at; i + 1 < size_; ++i) data_[i] = std::move(data_[i + 1]);
    data_[size_ - 1].~T();
    --size_;
    return data_ + at;
  }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    if (a.size_ != b.size_) return false;
    for (size_t i = 0; i < a.size_; ++i) {
      if (!(a.data_[i] == b.data_[i])) return false;
    }
    return true;
  }
  friend bool operator!=(const SmallVector& a, const SmallVector& b) { return !(a == b); }

 private:
  T* Inline() { return reinterpret_cast<T*>(inline_); }
  bool OnHeap() const { return data_ != reinterpret_cast<const T*>(inline_); }

  // Trivially copyable elements (constants, atom ids, terms) move as bytes.
  static constexpr bool kTrivial = std::is_trivially_copyable_v<T>;

  // Precondition: this is empty.
  void CopyFrom(const SmallVector& other) {
    reserve(other.size_);
    if constexpr (kTrivial) {
      if (other.size_) std::memcpy(static_cast<void*>(data_), other.data_, other.size_ * sizeof(T));
      size_ = other.size_;
    } else {
      for (const T& v : other) push_back(v);
    }
  }

  void Grow(size_t n) {
    T* fresh = static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(alignof(T))));
    if constexpr (kTrivial) {
      if (size_) std::memcpy(static_cast<void*>(fresh), data_, size_ * sizeof(T));
    } else {
      for (size_t i = 0; i < size_; ++i) {
        ::new (static_cast<void*>(fresh + i)) T(std::move(data_[i]));
        data_[i].~T();
      }
    }
    FreeHeap();
    data_ = fresh;
    capacity_ = static_cast<uint32_t>(n);
  }
  void FreeHeap() {
    if (OnHeap()) ::operator delete(data_, std::align_val_t(alignof(T)));
    data_ = Inline();
    capacity_ = N;
  }
  // Precondition: this is empty and inline.
  void MoveFrom(SmallVector&& other) {
    if (other.OnHeap()) {
      data_ = other.data_;
      capacity_ = other.capacity_;
      size_ = other.size_;
      other.data_ = other.Inline();
      other.capacity_ = N;
      other.size_ = 0;
      return;
    }
    if constexpr (kTrivial) {
      if (other.size_) std::memcpy(static_cast<void*>(data_), other.data_, other.size_ * sizeof(T));
    } else {
      for (size_t i = 0; i < other.size_; ++i) {
        ::new (static_cast<void*>(data_ + i)) T(std::move(other.data_[i]));
      }
    }
    size_ = other.size_;
    other.clear();
  }

  T* data_ = Inline();
  uint32_t size_ = 0;
  uint32_t capacity_ = N;
  alignas(T) unsigned char inline_[N * sizeof(T)];
};

}  // namespace support
}  // namespace tessel

#endif  // TESSEL_SRC_SUPPORT_SMALL_VECTOR_H_
