// Result<T>: a value or an error that names where it happened. Used for
// recoverable errors (unreadable input, bad field); exceptions are kept for
// fatal usage errors caught in main().
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace aimem {

struct Error {
  std::string message;  // what was wrong, where, and what to do
};

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

inline Error make_error(std::string message) { return Error{std::move(message)}; }

}  // namespace aimem
