// SPDX-License-Identifier: Apache-2.0
// The compiled part of {fmt} (see CMakeLists.txt for why it is built here). format-inl.h defines fmt's
// non-template functions when FMT_HEADER_ONLY is not set; format.h declares the locale helpers below as
// `extern template` in that mode, so their explicit instantiations must live in exactly one file.
#include <fmt/format-inl.h>
#include <fmt/format.h>

#ifdef FMT_HEADER_ONLY
#error \
    "railscope_fmt compiles fmt once: FMT_HEADER_ONLY must not be defined (link railscope_fmt, not fmt::fmt-header-only)"
#endif

FMT_BEGIN_NAMESPACE
namespace detail {
template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto thousands_sep_impl<wchar_t>(locale_ref) -> thousands_sep_result<wchar_t>;
template auto decimal_point_impl(locale_ref) -> char;
template auto decimal_point_impl(locale_ref) -> wchar_t;
}  // namespace detail
FMT_END_NAMESPACE
