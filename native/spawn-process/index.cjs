'use strict';
// The compiled addon, built by `node-gyp rebuild` when the package is installed.
module.exports = require('./build/Release/spawn_process.node');
