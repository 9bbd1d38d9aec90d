console.log('nothing to bundle');
