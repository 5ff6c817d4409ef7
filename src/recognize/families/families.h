// Every recognizer's registry entry; the table itself is in registry.cc.
#pragma once

#include "recognize/recognizer.h"

namespace aimem {

extern const RecognizerEntry kKernelOomEntry;

}  // namespace aimem
