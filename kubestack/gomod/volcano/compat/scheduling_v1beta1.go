package v1beta1

// Declared by volcano.sh/apis v1.15, which the Go module proxy does not serve;
// Volcano v1.15.1's scheduler refers to it.
const QueueAllocationGateKey = GroupName + "/queue-allocation-gate"
