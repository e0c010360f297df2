#pragma once
#define CUB_VERSION 300001
