package storetest

// contractPromises are the parts of the contract a store opts into by
// interface beyond the lock itself.
var contractPromises = []promise{}
