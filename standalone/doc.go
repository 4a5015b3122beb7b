// Package standalone holds tide's standalone deployment: the passive resource manager
// driver (TaskManagers are started by scripts or by hand and register by themselves;
// the AM can only accept, refuse or disconnect them) and the local launcher behind
// `tide run --target local`, which starts an AM and N TaskManagers as child processes.
package standalone
