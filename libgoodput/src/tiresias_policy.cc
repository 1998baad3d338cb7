// Placeholder until the policy work lands (issue 2); replaced wholesale.
#include "pollux/policy.h"
